import Foundation
import CLibPQ

/// One libpq connection (`PGconn*`), owned here and finished in deinit. Every statement goes out
/// through `PQexecParams` with its values as text parameters: no value is ever part of the SQL.
final class PostgresConnection {
    private let connection: OpaquePointer
    /// Scrubbed from every message, should a server or libpq ever echo it.
    private let password: String?

    /// Connects with libpq's keyword/value pairs (`host`, `port`, `user`, `dbname`, …), taken as
    /// they are: no pair is parsed as a connection string. A failure is one line that names
    /// `redactedURL` and libpq's reason.
    init(parameters: [(keyword: String, value: String)], redactedURL: String, password: String?) throws(DatabaseError) {
        let keywords: [String?] = parameters.map(\.keyword) + [nil]
        let values: [String?] = parameters.map(\.value) + [nil]
        let opened = withCStrings(keywords) { keywords in
            withCStrings(values) { values in PQconnectdbParams(keywords, values, 0) }
        }
        guard let opened else { throw DatabaseError(.connection, "cannot connect to \(redactedURL): out of memory") }
        connection = opened
        self.password = password
        guard PQstatus(opened) == CONNECTION_OK else {
            throw DatabaseError(.connection, "cannot connect to \(redactedURL): \(oneLine(PQerrorMessage(opened)))")
        }
    }

    deinit { PQfinish(connection) }

    /// The server's version as it reports it, without the distributor's note (`15.18`).
    var serverVersion: String {
        guard let reported = PQparameterStatus(connection, "server_version") else { return "" }
        return String(String(cString: reported).prefix { $0 != " " })
    }

    /// The server's version as a number (`150018`), for what older servers' catalogs lack.
    var serverVersionNumber: Int { Int(PQserverVersion(connection)) }

    /// Runs one statement with `parameters` ($1, $2, …; nil is SQL NULL). `what` says, for an
    /// error, what the statement was doing ("deleting the batch's rows from app.devices").
    @discardableResult
    func execute(_ sql: String, _ parameters: [String?] = [], what: String) throws(DatabaseError) -> PostgresResult {
        // libpq's values are C strings: a NUL would cut a value short into another value.
        if parameters.contains(where: { $0?.utf8.contains(0) == true }) {
            throw DatabaseError(.statement, "PostgreSQL: \(what): a value contains a NUL character, which PostgreSQL text cannot hold")
        }
        let raw = withCStrings(parameters + [nil]) { values in
            PQexecParams(connection, sql, Int32(parameters.count), nil, values, nil, nil, 0)
        }
        guard let raw else {
            throw DatabaseError(.statement, "PostgreSQL: \(what): \(oneLine(PQerrorMessage(connection)))")
        }
        let result = PostgresResult(raw)
        let status = PQresultStatus(raw)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw DatabaseError(.statement, "PostgreSQL: \(what): \(oneLine(PQresultErrorMessage(raw)))")
        }
        return result
    }

    /// libpq's message (several lines, tab-indented hints) as one line, without the password.
    private func oneLine(_ message: UnsafePointer<CChar>?) -> String {
        var text = message.map { String(cString: $0) } ?? "unknown error"
        if let password, password.count >= 4 { text = text.replacingOccurrences(of: password, with: "***") }
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" })
        return words.isEmpty ? "unknown error" : words.joined(separator: " ")
    }
}

/// One statement's answer (`PGresult*`), owned here and cleared in deinit.
final class PostgresResult {
    private let result: OpaquePointer

    fileprivate init(_ result: OpaquePointer) { self.result = result }

    deinit { PQclear(result) }

    var rowCount: Int { Int(PQntuples(result)) }

    /// The value at `row`, `column` in PostgreSQL's text form; nil for NULL.
    func value(_ row: Int, _ column: Int) -> String? {
        if PQgetisnull(result, Int32(row), Int32(column)) == 1 { return nil }
        return PQgetvalue(result, Int32(row), Int32(column)).map { String(cString: $0) }
    }

    /// The rows an INSERT, UPDATE or DELETE changed.
    var changedRows: Int { PQcmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0 }
}

/// `strings` as one buffer of C strings and an array of pointers into it (nil stays a null
/// pointer), as libpq takes keywords, values and parameters.
private func withCStrings<Result>(_ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> Result) -> Result {
    var buffer: [CChar] = []
    buffer.reserveCapacity(strings.reduce(0) { $0 + ($1?.utf8.count ?? 0) + 1 })
    let offsets: [Int?] = strings.map { string in
        guard let string else { return nil }
        let offset = buffer.count
        buffer.append(contentsOf: string.utf8.lazy.map { CChar(bitPattern: $0) })
        buffer.append(0)
        return offset
    }
    return buffer.withUnsafeBufferPointer { characters in
        let pointers: [UnsafePointer<CChar>?] = offsets.map { offset in offset.flatMap { characters.baseAddress?.advanced(by: $0) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
    }
}
