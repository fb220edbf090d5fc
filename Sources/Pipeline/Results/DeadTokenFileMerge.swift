import APNs
import Foundation

/// A dead-tokens.csv and the feedback service's tuples merged by `report`'s rule
/// (`DeadTokenMerge`): one line per device token, the one with the latest `unregistered_at`
/// kept (a dated line beats an undated one; on a tie the newer one wins), in order of first
/// appearance. Lines already in the file keep their text.
public struct DeadTokenFileMerge {
    private var kept = LatestDeadTokens<String>()
    /// Lines read from the existing file.
    public private(set) var existingLines = 0

    /// Why the existing file cannot be merged.
    public struct Problem: Error, CustomStringConvertible {
        public let description: String
    }

    /// Starts from the file at `path` when it exists (it must be a dead-tokens.csv), else empty.
    public init(existingPath path: String) throws(Problem) {
        guard FileManager.default.fileExists(atPath: path) else { return }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Problem(description: "\(path): cannot read it; give a readable dead-tokens.csv or a new path")
        }
        let text = String(decoding: data, as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        guard !lines.isEmpty else { return }
        guard lines.removeFirst() + "\n" == DeadTokenReport.header else {
            throw Problem(description: "\(path): not a dead-tokens.csv (its header is not \(DeadTokenReport.header.dropLast())); "
                          + "give a dead-token list written by apns-bulk, or a new path")
        }
        for line in lines {
            let fields = Self.fields(line)
            guard fields.count == 5 else {
                throw Problem(description: "\(path): the line \"\(line)\" does not have the 5 columns of the header")
            }
            existingLines += 1
            kept.keep(token: fields[0], unregisteredAt: ISO8601.milliseconds(fields[3]), line: line)
        }
    }

    /// Adds a feedback tuple: reason `Unregistered`, no status, `unregistered_at` from the tuple,
    /// no row. Returns true when the token was new to the list.
    @discardableResult
    public mutating func add(_ tuple: FeedbackTuple) -> Bool {
        let token = tuple.hexToken
        let milliseconds = Int64(tuple.time) * 1000
        let at = ISO8601.format(milliseconds: milliseconds)
        return kept.keep(token: token, unregisteredAt: milliseconds, line: "\(token),Unregistered,,\(at),")
    }

    /// Distinct tokens in the list.
    public var count: Int { kept.count }

    /// Writes the merged list (a new file renamed over the old one).
    public func write(to path: String) throws(OutputFileError) {
        var out = Array(DeadTokenReport.header.utf8)
        for line in kept.lines {
            out += Array(line.utf8)
            out.append(UInt8(ascii: "\n"))
        }
        try OutputFile.write(out, to: path, atomically: true)
    }

    /// A CSV line's fields (RFC 4180 quotes, as `CSVText.appendField` writes them).
    static func fields(_ line: String) -> [String] {
        // Without a quote a line is its commas' pieces: split as bytes, the common case made fast.
        if !line.utf8.contains(UInt8(ascii: "\"")) {
            return line.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
                .map { String(decoding: $0.filter { $0 != UInt8(ascii: "\r") }, as: UTF8.self) }
        }
        var fields: [String] = []
        var field = ""
        var quoted = false
        var iterator = Array(line).makeIterator()
        var pending: Character? = nil
        while let character = pending ?? iterator.next() {
            pending = nil
            if quoted {
                if character == "\"" {
                    if let next = iterator.next() {
                        if next == "\"" { field.append("\"") } else { quoted = false; pending = next }
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(character)
                }
            } else if character == "\"" {
                quoted = true
            } else if character == "," {
                fields.append(field)
                field = ""
            } else if character != "\r" {
                field.append(character)
            }
        }
        fields.append(field)
        return fields
    }
}
