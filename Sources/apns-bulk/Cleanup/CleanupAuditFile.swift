import Cleanup
import Foundation
import Pipeline

/// `cleanup --audit-out`: every row deleted or marked, as CSV: the row's key columns (its primary
/// key, else the token column), `device_token` as the table spells it, the list's `reason` and
/// `unregistered_at` (ISO 8601, empty when the line had none), and the `action` (`delete`,
/// `mark`, or in a dry run `would-delete`, `would-mark`). Written batch by batch, each flushed
/// once its batch is committed, so that after a kill it lists what was committed.
final class CleanupAuditFile {
    private let handle: FileHandle
    private let path: String

    /// Why the audit file cannot be written.
    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    init(path: String, keyColumns: [String]) throws {
        self.path = path
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw RunFailure.usage("--audit-out \(path): cannot create it; give a writable path (nothing was changed)")
        }
        self.handle = handle
        var header: [UInt8] = []
        for column in keyColumns + ["device_token", "reason", "unregistered_at", "action"] {
            if !header.isEmpty { header.append(UInt8(ascii: ",")) }
            CSVText.appendField(column, to: &header)
        }
        header.append(UInt8(ascii: "\n"))
        try write(header)
    }

    func append(_ rows: [AuditedRow]) throws {
        guard !rows.isEmpty else { return }
        var out: [UInt8] = []
        for row in rows {
            for key in row.keys {
                CSVText.appendField(key ?? "", to: &out)
                out.append(UInt8(ascii: ","))
            }
            CSVText.appendField(row.tableToken, to: &out)
            out.append(UInt8(ascii: ","))
            CSVText.appendField(row.reason, to: &out)
            out.append(UInt8(ascii: ","))
            if let at = row.unregisteredAt { out.append(contentsOf: ISO8601.format(milliseconds: at).utf8) }
            out.append(UInt8(ascii: ","))
            out.append(contentsOf: row.action.utf8)
            out.append(UInt8(ascii: "\n"))
        }
        try write(out)
    }

    func close() throws {
        do { try handle.close() } catch { throw Problem(description: "\(path): \(error.localizedDescription)") }
    }

    private func write(_ bytes: [UInt8]) throws {
        do {
            try handle.write(contentsOf: Data(bytes))
            try handle.synchronize()
        } catch {
            throw Problem(description: "\(path): \(error.localizedDescription)")
        }
    }
}
