import Foundation

/// One or more dead-token lists (dead-tokens.csv as `send`, `report --dead-tokens` and `feedback`
/// write it) read for `cleanup`, merged by the rule of every dead-token list (`LatestDeadTokens`):
/// one line per token, the latest `unregistered_at` kept. Columns are found by name in the header;
/// `device_token,reason,status,unregistered_at,row` must be there, any others are ignored. A token
/// is only a value: one that is not hex is kept as given, never a refusal.
public struct DeadTokenList {
    /// One kept line.
    public struct Line: Sendable, Equatable {
        /// The token as the list spells it.
        public let token: String
        public let reason: String
        /// Unix milliseconds; nil when the line has none (a 400, or a 410 without a time).
        public let unregisteredAt: Int64?

        public init(token: String, reason: String, unregisteredAt: Int64?) {
            self.token = token
            self.reason = reason
            self.unregisteredAt = unregisteredAt
        }
    }

    /// Why a list cannot be read: names the file (and line) and what to give instead.
    public struct Problem: Error, CustomStringConvertible {
        public let description: String
    }

    /// The columns apns-bulk writes, each required.
    public static let requiredColumns = ["device_token", "reason", "status", "unregistered_at", "row"]

    /// Kept lines, one per token (tokens compared lowercased), in order of first appearance.
    public let lines: [Line]
    /// Lines read from all files, before merging and filtering.
    public let linesRead: Int
    /// Lines left out because `keepsReason` refused their reason.
    public let linesFilteredOut: Int

    /// Reads every file in `paths`, keeping only lines whose reason `keepsReason` accepts.
    public init(paths: [String], keepsReason: (String) -> Bool = { _ in true }) throws(Problem) {
        var merge = LatestDeadTokens<Line>()
        var read = 0
        var filtered = 0
        for path in paths {
            try Self.read(path: path) { line in
                read += 1
                guard keepsReason(line.reason) else { filtered += 1; return }
                merge.keep(token: line.token.lowercased(), unregisteredAt: line.unregisteredAt, line: line)
            }
        }
        lines = merge.lines
        linesRead = read
        linesFilteredOut = filtered
    }

    private static func read(path: String, each: (Line) -> Void) throws(Problem) {
        guard let data = FileManager.default.contents(atPath: path) else {
            let missing = !FileManager.default.fileExists(atPath: path)
            throw Problem(description: "\(path): \(missing ? "no such file" : "cannot read it"); "
                          + "give a dead-tokens.csv written by apns-bulk send, report or feedback")
        }
        // Split as bytes: fast, and a list written on Windows ("\r\n") reads as one written on Unix.
        var lines = Array(data).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
        }
        if lines.last == "" { lines.removeLast() }
        guard let headerLine = lines.first else {
            throw Problem(description: "\(path): the file is empty; a dead-token list starts with the header "
                          + requiredColumns.joined(separator: ","))
        }
        let header = DeadTokenFileMerge.fields(headerLine)
            .map { $0.trimmingCharacters(in: CharacterSet.whitespaces.union(CharacterSet(charactersIn: "\u{FEFF}"))) }
        var positions: [Int] = []
        for column in requiredColumns {
            guard let found = header.firstIndex(of: column) else {
                throw Problem(description: "\(path): no \(column) column in the header (\(headerLine.prefix(200))); a dead-token "
                              + "list has the columns " + requiredColumns.joined(separator: ","))
            }
            positions.append(found)
        }
        let (token, reason, unregisteredAt) = (positions[0], positions[1], positions[3])
        for (offset, text) in lines.enumerated().dropFirst() where !text.isEmpty {
            let fields = DeadTokenFileMerge.fields(text)
            guard fields.count == header.count else {
                throw Problem(description: "\(path) line \(offset + 1): \(fields.count) fields where the header has "
                              + "\(header.count); give the list as apns-bulk wrote it")
            }
            // A line without a token names no device: nothing to match.
            guard !fields[token].isEmpty else { continue }
            let at = fields[unregisteredAt]
            var milliseconds: Int64? = nil
            if !at.isEmpty {
                guard let parsed = ISO8601.milliseconds(at) else {
                    throw Problem(description: "\(path) line \(offset + 1): unregistered_at \"\(at.prefix(64))\" is not "
                                  + "an ISO 8601 UTC time such as 2025-12-22T16:46:28.279Z; fix or empty it")
                }
                milliseconds = parsed
            }
            each(Line(token: fields[token], reason: fields[reason], unregisteredAt: milliseconds))
        }
    }
}
