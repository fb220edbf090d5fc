import APNs
#if canImport(Glibc)
import Glibc
#endif

/// dead-tokens.csv, the cleanup list: `device_token,reason,status,unregistered_at,row` for every
/// `unregistered` and `bad_token` row. `unregistered_at` is ISO 8601 UTC with milliseconds
/// (`2026-11-23T09:31:39.123Z`, APNs' precision), empty for 400s. A broadcast campaign's is
/// dead-channels.csv, `channel_id,reason,status,row` for every row answered ChannelNotRegistered
/// (`failed`; those answered before a delivery proved the environment end `aborted` unless it
/// comes, `EnvironmentProof`): the channels to remove from the app's backend. Owned by the writer thread.
public final class DeadTokenReport {
    /// dead-tokens.csv's header row (docs/file-formats.md's contract).
    public static let header = "device_token,reason,status,unregistered_at,row\n"
    /// dead-channels.csv's header row.
    public static let channelsHeader = "channel_id,reason,status,row\n"
    private let file: BufferedOutput
    /// Lines written after the header.
    public private(set) var tokensWritten = 0
    /// Whose rows it lists: dead device tokens, or a broadcast's unknown channels.
    let kind: ResultRecord.Kind

    /// Creates (or truncates) `path` and writes the header.
    public init(path: String, kind: ResultRecord.Kind = .deviceToken) throws(OutputFileError) {
        self.kind = kind
        file = try BufferedOutput(path: path)
        file.append(Array((kind == .broadcast ? Self.channelsHeader : Self.header).utf8))
    }

    /// Whether a record of `outcome` may be listed: a dead token's, or a broadcast's `failed`
    /// (`add` then keeps only ChannelNotRegistered).
    @inline(__always)
    func mayList(_ outcome: Outcome) -> Bool {
        outcome.isDeadToken || (outcome == .failed && kind == .broadcast)
    }

    /// Adds the record if it is a dead token; ignores every other outcome.
    public func add(_ record: ResultRecord) throws(OutputFileError) {
        try add(RowResult(record))
    }

    func add(_ record: borrowing RowResult) throws(OutputFileError) {
        if kind == .broadcast {
            guard record.outcome == .failed, record.reason == Reason.channelNotRegistered.name else { return }
            try file.withBuffer { Self.appendLine(record, to: &$0, unregisteredAt: false) }
            tokensWritten += 1
            return
        }
        guard record.outcome.isDeadToken else { return }
        try file.withBuffer { Self.appendLine(record, to: &$0) }
        tokensWritten += 1
    }


    /// Writes what is buffered and closes the file.
    public func close() throws(OutputFileError) { try file.close() }

    /// `unregisteredAt`: the column is there (dead-tokens.csv), not in dead-channels.csv.
    static func appendLine(_ record: borrowing RowResult, to out: inout [UInt8], unregisteredAt: Bool = true) {
        CSVText.appendField(String(decoding: record.deviceToken, as: UTF8.self), to: &out)
        out.append(UInt8(ascii: ","))
        CSVText.appendField(record.reason ?? "", to: &out)
        out.append(UInt8(ascii: ","))
        JSONText.appendInteger(Int64(record.status), to: &out)
        out.append(UInt8(ascii: ","))
        if unregisteredAt {
            if let at = record.unregisteredAt { out.append(contentsOf: ISO8601.format(milliseconds: at).utf8) }
            out.append(UInt8(ascii: ","))
        }
        JSONText.appendInteger(Int64(record.row), to: &out)
        out.append(UInt8(ascii: "\n"))
    }
}
