import Pipeline
import ZstdFile

/// Reads timeline.jsonl.zst back: every line zstd still decodes (the complete lines of a frame a
/// crash cut included), and where its complete frames end (what a resume keeps before appending).
/// A missing, unreadable or corrupt file is never an error: the page shows what it has.
public enum TimelineFile {
    /// The sidecar's name beside results.jsonl.zst.
    public static let name = "timeline.jsonl.zst"

    /// The sidecar beside the result log at `logPath`.
    public static func path(besideLog logPath: String) -> String {
        guard let slash = logPath.lastIndex(of: "/") else { return name }
        return String(logPath[...slash]) + name
    }

    /// What a read found: the lines, and the bytes of its complete frames.
    public struct Contents: Sendable {
        public var lines: [TimelineLine] = []
        public var completeBytes = 0
    }

    /// The file's lines; nil when there is no readable file at `path`.
    public static func read(path: String) -> Contents? {
        guard let reader = try? ZstdStreamReader(path: path) else { return nil }
        var contents = Contents()
        var frame: [UInt8] = []
        loop: while true {
            do {
                switch try reader.read(appendingTo: &frame, limit: 1 << 20) {
                case .more: continue
                case .frameEnd:
                    parse(&frame, into: &contents)
                    contents.completeBytes = reader.compressedOffset
                case .end:
                    parse(&frame, into: &contents)
                    break loop
                }
            } catch {
                // A cut last frame (kill -9): its complete lines still count; anything else ends reading.
                parse(&frame, into: &contents)
                break loop
            }
        }
        return contents
    }

    private static func parse(_ frame: inout [UInt8], into contents: inout Contents) {
        var start = 0
        while let end = frame[start...].firstIndex(of: 10) {
            if end > start, let line = TimelineLine.parse(frame[start..<end]) { contents.lines.append(line) }
            start = end + 1
        }
        frame.removeAll(keepingCapacity: true)
    }
}
