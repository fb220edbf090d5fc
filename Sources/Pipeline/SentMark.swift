#if canImport(Glibc)
import Glibc
#endif

/// `sent-through` in `--out`: a row number no row this run has handed to its connections exceeds,
/// written ahead (by `step` rows) before the rows are handed over, one small `pwrite` per `step`
/// rows. After a kill the result log says which rows were answered and logged; this says which
/// may have been sent, so `--resume` can count the rows it sends again (`resent_after_crash`)
/// as a true upper bound that overshoots by at most `step` rows and the reader's queue.
/// (Not synced to disk: a power cut may lose its last update, as it may the log's last frame.)
/// Touched only by the reader thread once the run starts.
final class SentMark: @unchecked Sendable {
    static let fileName = "sent-through"
    private let path: String
    private var descriptor: Int32
    private(set) var through = 0
    private let step: Int

    /// Starts the file at 0: this run has sent nothing yet.
    init(directory: String, step: Int = 4096) throws(CampaignDirectoryError) {
        path = directory + "/" + Self.fileName
        self.step = step
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw .output(path: path, detail: String(cString: strerror(errno))) }
        store(0)
    }

    deinit { if descriptor >= 0 { _ = close(descriptor) } }

    /// Called with a batch's last row number before the batch's rows are handed on.
    @inline(__always)
    func cover(_ row: Int) {
        if row > through { advance(row) }
    }

    private func advance(_ row: Int) {
        through = row + step
        store(through)
    }

    /// Fixed width, so each update is one `pwrite` over the last.
    private func store(_ value: Int) {
        var text = Array(String(value).utf8)
        text.insert(contentsOf: repeatElement(UInt8(ascii: "0"), count: Swift.max(0, 19 - text.count)), at: 0)
        text.append(0x0A)
        guard descriptor >= 0 else { return }
        if pwrite(descriptor, text, text.count, 0) != text.count {
            // Without a trustworthy mark, --resume falls back to its estimate from the log.
            _ = unlink(path)
            _ = close(descriptor)
            descriptor = -1
        }
    }

    /// The mark a crashed run left in `directory`; nil when there is none.
    static func read(directory: String) -> Int? {
        let descriptor = open(directory + "/" + fileName, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { _ = close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = Glibc.read(descriptor, &bytes, bytes.count)
        guard count > 1 else { return nil }
        return Int(String(decoding: bytes[0..<count].filter { $0 >= 0x30 && $0 <= 0x39 }, as: UTF8.self))
    }
}
