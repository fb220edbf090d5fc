#if canImport(Glibc)
import Glibc
#endif

/// Why an output file could not be written.
public struct OutputFileError: Error, CustomStringConvertible, Equatable {
    public let path: String
    public let errno: Int32
    public var description: String {
        "cannot write \(path): \(String(cString: strerror(errno))); check the directory exists, is writable and has space"
    }
}

/// dead-tokens.csv, the cleanup list: `device_token,reason,status,unregistered_at,row` for every
/// `unregistered` and `bad_token` row. `unregistered_at` is ISO 8601 UTC with milliseconds
/// (`2026-11-23T09:31:39.123Z`, APNs' precision), empty for 400s. Owned by the writer thread.
public final class DeadTokenReport {
    public static let header = "device_token,reason,status,unregistered_at,row\n"
    private let file: BufferedOutput
    public private(set) var tokensWritten = 0

    public init(path: String) throws(OutputFileError) {
        file = try BufferedOutput(path: path)
        file.append(Array(Self.header.utf8))
    }

    /// Adds the record if it is a dead token; ignores every other outcome.
    public func add(_ record: ResultRecord) throws(OutputFileError) {
        try add(RowResult(record))
    }

    func add(_ record: borrowing RowResult) throws(OutputFileError) {
        guard record.outcome.isDeadToken else { return }
        try file.withBuffer { Self.appendLine(record, to: &$0) }
        tokensWritten += 1
    }

    public func close() throws(OutputFileError) { try file.close() }

    static func appendLine(_ record: borrowing RowResult, to out: inout [UInt8]) {
        CSVText.appendField(String(decoding: record.deviceToken, as: UTF8.self), to: &out)
        out.append(UInt8(ascii: ","))
        CSVText.appendField(record.reason ?? "", to: &out)
        out.append(UInt8(ascii: ","))
        JSONText.appendInteger(Int64(record.status), to: &out)
        out.append(UInt8(ascii: ","))
        if let at = record.unregisteredAt { out.append(contentsOf: ISO8601.format(milliseconds: at).utf8) }
        out.append(UInt8(ascii: ","))
        JSONText.appendInteger(Int64(record.row), to: &out)
        out.append(UInt8(ascii: "\n"))
    }
}

/// RFC 4180 output: a field is quoted when it holds a comma, quote, CR or LF (or edge spaces).
enum CSVText {
    static func appendField(_ value: String, to out: inout [UInt8]) {
        let utf8 = value.utf8
        let needsQuotes = utf8.contains { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }
            || utf8.first == 0x20 || utf8.last == 0x20
        guard needsQuotes else { out.append(contentsOf: utf8); return }
        out.append(0x22)
        for byte in utf8 {
            if byte == 0x22 { out.append(0x22) }
            out.append(byte)
        }
        out.append(0x22)
    }
}

/// A file written in large buffers, one `write()` per buffer.
final class BufferedOutput {
    let path: String
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private let bufferSize: Int
    private var closed = false

    init(path: String, bufferSize: Int = 1 << 20) throws(OutputFileError) {
        self.path = path
        self.bufferSize = bufferSize
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw OutputFileError(path: path, errno: errno) }
        buffer.reserveCapacity(bufferSize + 4096)
    }

    deinit { if !closed { _ = Glibc.close(descriptor) } }

    func append(_ bytes: [UInt8]) { buffer.append(contentsOf: bytes) }

    func withBuffer(_ body: (inout [UInt8]) -> Void) throws(OutputFileError) {
        body(&buffer)
        if buffer.count >= bufferSize { try flush() }
    }

    func flush() throws(OutputFileError) {
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw OutputFileError(path: path, errno: errno)
            }
            offset += written
        }
        buffer.removeAll(keepingCapacity: true)
    }

    func close() throws(OutputFileError) {
        guard !closed else { return }
        try flush()
        closed = true
        if Glibc.close(descriptor) != 0 { throw OutputFileError(path: path, errno: errno) }
    }
}
