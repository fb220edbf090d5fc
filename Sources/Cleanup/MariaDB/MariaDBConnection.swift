import CMariaDB
import Foundation

/// One connection to a MariaDB or MySQL server through MariaDB Connector/C: owns its `MYSQL*`, and
/// runs statements on it. Every value travels as a bound string parameter of a prepared statement
/// (`query`); `execute` takes only SQL the code wrote itself (identifiers from the catalog, quoted).
/// Used by one thread at a time, the cleanup run's.
final class MariaDBConnection {
    fileprivate let handle: UnsafeMutablePointer<MYSQL>
    /// The URL as messages show it: its password, if it had one, is `***`.
    let redactedURL: String

    /// The client library's global state, set up once before the first connection (its own lazy
    /// set-up inside `mysql_init` is not safe when two threads connect at once).
    private static let libraryReady: Bool = mysql_server_init(0, nil, nil) == 0

    /// Connects to `url` as its user with `password`: TCP when the URL names a host (else the local
    /// socket), the URL's database as the default one, UTF-8 text, and the session's time zone UTC, so
    /// that a `TIMESTAMP` reads as UTC and a `DATETIME` is taken as UTC.
    init(url: DatabaseURL, password: String?, connectTimeoutSeconds: UInt32 = 10) throws(DatabaseError) {
        redactedURL = url.redacted
        handle = try Self.connect(url, password: password, timeout: connectTimeoutSeconds)
        try execute("SET time_zone = '+00:00'")
    }

    deinit { mysql_close(handle) }

    /// The server's name and version (`MariaDB 10.11.19`, `MySQL 8.0.36`).
    var product: String {
        let info = mysql_get_server_info(handle).map { String(cString: $0) } ?? ""
        let version = info.prefix { $0 != "-" }
        return info.contains("MariaDB") ? "MariaDB \(version)" : "MySQL \(version)"
    }

    /// Runs SQL that holds no value from outside the program (a transaction's edges, a scratch table's
    /// definition from quoted catalog names).
    func execute(_ sql: String) throws(DatabaseError) {
        let failed = sql.withCString { mysql_real_query(handle, $0, UInt(strlen($0))) } != 0
        if failed { throw failure(.statement) }
        // A statement that answers rows (none of ours) would otherwise block the next one.
        if let result = mysql_store_result(handle) { mysql_free_result(result) }
    }

    /// Prepares `sql`, binds `parameters` to its `?` in order (each a string, or NULL), runs it, and
    /// returns its rows (every column read as text) and how many rows it changed.
    func query(_ sql: String, _ parameters: [String?] = []) throws(DatabaseError) -> MariaDBAnswer {
        guard let statement = mysql_stmt_init(handle) else { throw failure(.statement) }
        return try MariaDBStatement(statement, on: self).run(sql, parameters)
    }

    fileprivate func failure(_ kind: DatabaseError.Kind) -> DatabaseError {
        DatabaseError(kind, "\(redactedURL): \(Self.oneLine(mysql_error(handle)))")
    }

    fileprivate static func oneLine(_ message: UnsafePointer<CChar>?) -> String {
        let text = message.map { String(cString: $0) } ?? ""
        let line = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return line.isEmpty ? "the server gave no reason" : line
    }

    private static func connect(_ url: DatabaseURL, password: String?,
                                timeout: UInt32) throws(DatabaseError) -> UnsafeMutablePointer<MYSQL> {
        guard libraryReady, let handle = mysql_init(nil) else {
            throw DatabaseError(.connection, "\(url.redacted): the MariaDB client library could not start")
        }
        var seconds = timeout
        var noLocalFiles: UInt32 = 0
        _ = mysql_options(handle, MYSQL_OPT_CONNECT_TIMEOUT, &seconds)
        _ = mysql_options(handle, MYSQL_OPT_LOCAL_INFILE, &noLocalFiles)
        _ = mysql_options(handle, MYSQL_SET_CHARSET_NAME, "utf8mb4")
        if url.host != nil {
            var tcp = UInt32(MYSQL_PROTOCOL_TCP.rawValue)
            _ = mysql_options(handle, MYSQL_OPT_PROTOCOL, &tcp)
        }
        let database = url.database.isEmpty ? nil : url.database
        let connected = withCStrings([url.host, url.user, password, database]) { text in
            mysql_real_connect(handle, text[0], text[1], text[2], text[3], UInt32(url.port ?? 0), nil, 0) != nil
        }
        guard connected else {
            let reason = oneLine(mysql_error(handle))
            mysql_close(handle)
            throw DatabaseError(.connection, "\(url.redacted): cannot connect: \(reason)")
        }
        return handle
    }
}

/// What a statement answered: its rows, each column as text or NULL, and the rows it changed.
struct MariaDBAnswer {
    var rows: [[String?]] = []
    var changedRows = 0
}

/// One prepared statement: owns its `MYSQL_STMT*`, and keeps its connection alive as long as it lives.
private final class MariaDBStatement {
    private let handle: UnsafeMutablePointer<MYSQL_STMT>
    private let connection: MariaDBConnection
    /// Bytes a result column holds in place; a longer value is read again at its own length.
    private static let columnBytes = 256

    init(_ handle: UnsafeMutablePointer<MYSQL_STMT>, on connection: MariaDBConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit { mysql_stmt_close(handle) }

    func run(_ sql: String, _ parameters: [String?]) throws(DatabaseError) -> MariaDBAnswer {
        let prepared = sql.withCString { mysql_stmt_prepare(handle, $0, UInt(strlen($0))) } == 0
        guard prepared else { throw failure() }
        guard Int(mysql_stmt_param_count(handle)) == parameters.count else {
            preconditionFailure("a statement's markers and its parameters differ in number")
        }
        try bindAndExecute(parameters)
        var answer = MariaDBAnswer()
        if mysql_stmt_field_count(handle) > 0 {
            answer.rows = try fetchRows()
        } else {
            answer.changedRows = Int(mysql_stmt_affected_rows(handle))
        }
        return answer
    }

    /// The statement's error, or else the connection's: a row fetch that meets an error packet (a lock
    /// wait timeout while rows stream) leaves its reason on the connection, the statement's left empty.
    private func failure() -> DatabaseError {
        if mysql_stmt_errno(handle) == 0, mysql_errno(connection.handle) != 0 { return connection.failure(.statement) }
        return DatabaseError(.statement, "\(connection.redactedURL): \(MariaDBConnection.oneLine(mysql_stmt_error(handle)))")
    }

    /// Binds each parameter as a string (MYSQL_TYPE_STRING) over one buffer that outlives the execution.
    private func bindAndExecute(_ parameters: [String?]) throws(DatabaseError) {
        let utf8 = parameters.map { $0.map { Array($0.utf8) } ?? [] }
        let slots = StringSlots(count: parameters.count, bytes: utf8.reduce(0) { $0 + $1.count })
        var offset = 0
        for (index, value) in utf8.enumerated() {
            value.withUnsafeBufferPointer { source in
                if let base = source.baseAddress { (slots.bytes + offset).update(from: base, count: source.count) }
            }
            slots.bind(index, at: offset, capacity: value.count, length: value.count, isNull: parameters[index] == nil)
            offset += value.count
        }
        if !parameters.isEmpty, mysql_stmt_bind_param(handle, slots.binds) != 0 { throw failure() }
        if mysql_stmt_execute(handle) != 0 { throw failure() }
    }

    /// Reads every row, each column converted to text by the client library (NULL stays nil).
    private func fetchRows() throws(DatabaseError) -> [[String?]] {
        let columns = Int(mysql_stmt_field_count(handle))
        let width = Self.columnBytes
        let slots = StringSlots(count: columns, bytes: columns * width)
        for column in 0..<columns {
            slots.bind(column, at: column * width, capacity: width, length: 0, isNull: false)
        }
        let (buffer, lengths, nulls, binds) = (slots.bytes, slots.lengths, slots.nulls, slots.binds)
        if mysql_stmt_bind_result(handle, binds) != 0 { throw failure() }
        var rows: [[String?]] = []
        while true {
            let status = mysql_stmt_fetch(handle)
            if status == MYSQL_NO_DATA { break }
            guard status == 0 || status == MYSQL_DATA_TRUNCATED else { throw failure() }
            var row: [String?] = []
            row.reserveCapacity(columns)
            for column in 0..<columns {
                if nulls[column] != 0 {
                    row.append(nil)
                } else if Int(lengths[column]) <= width {
                    row.append(String(decoding: UnsafeBufferPointer(start: buffer + column * width, count: Int(lengths[column])),
                                      as: UTF8.self))
                } else {
                    row.append(try fetchWhole(column, length: Int(lengths[column])))
                }
            }
            rows.append(row)
        }
        return rows
    }

    /// A column's value longer than its place in the row buffer, read again at its full length.
    private func fetchWhole(_ column: Int, length: Int) throws(DatabaseError) -> String {
        let slot = StringSlots(count: 1, bytes: length)
        slot.bind(0, at: 0, capacity: length, length: 0, isNull: false)
        guard mysql_stmt_fetch_column(handle, slot.binds, UInt32(column), 0) == 0 else { throw failure() }
        return String(decoding: UnsafeBufferPointer(start: slot.bytes, count: min(Int(slot.lengths[0]), length)), as: UTF8.self)
    }
}

/// MYSQL_BIND slots, each a string in a shared byte buffer with its length and NULL flag: what a
/// statement's parameters or a row's columns are bound to. Freed with the value.
private final class StringSlots {
    let count: Int
    let bytes: UnsafeMutablePointer<UInt8>
    let binds: UnsafeMutablePointer<MYSQL_BIND>
    let lengths: UnsafeMutablePointer<UInt>
    let nulls: UnsafeMutablePointer<my_bool>

    init(count: Int, bytes byteCount: Int) {
        self.count = max(count, 1)
        bytes = .allocate(capacity: max(byteCount, 1))
        binds = .allocate(capacity: self.count)
        binds.initialize(repeating: MYSQL_BIND(), count: self.count)
        lengths = .allocate(capacity: self.count)
        lengths.initialize(repeating: 0, count: self.count)
        nulls = .allocate(capacity: self.count)
        nulls.initialize(repeating: 0, count: self.count)
    }

    deinit {
        bytes.deallocate()
        binds.deinitialize(count: count)
        binds.deallocate()
        lengths.deallocate()
        nulls.deallocate()
    }

    /// Slot `index` as a string of `capacity` bytes at `offset` in the buffer.
    func bind(_ index: Int, at offset: Int, capacity: Int, length: Int, isNull: Bool) {
        binds[index].buffer_type = MYSQL_TYPE_STRING
        binds[index].buffer = UnsafeMutableRawPointer(bytes + offset)
        binds[index].buffer_length = UInt(capacity)
        binds[index].length = lengths + index
        binds[index].is_null = nulls + index
        lengths[index] = UInt(length)
        nulls[index] = isNull ? 1 : 0
    }
}

/// Calls `body` with C strings for `values` (NULL for nil), valid for the call only.
private func withCStrings<Result>(_ values: [String?], _ body: ([UnsafePointer<CChar>?]) -> Result) -> Result {
    let copies = values.map { $0.flatMap { strdup($0) } }
    defer { copies.forEach { free($0) } }
    return body(copies.map { $0.map { UnsafePointer($0) } })
}
