#if canImport(Glibc)
import Glibc
#endif

/// dead-tokens.csv, the cleanup list: `device_token,reason,status,unregistered_at,row` for every
/// `unregistered` and `bad_token` row. `unregistered_at` is ISO 8601 UTC with milliseconds
/// (`2026-11-23T09:31:39.123Z`, APNs' precision), empty for 400s. Owned by the writer thread.
public final class DeadTokenReport {
    /// dead-tokens.csv's header row (docs/file-formats.md's contract).
    public static let header = "device_token,reason,status,unregistered_at,row\n"
    private let file: BufferedOutput
    /// Lines written after the header.
    public private(set) var tokensWritten = 0

    /// Creates (or truncates) `path` and writes the header.
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

    /// Writes what is buffered and closes the file.
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
