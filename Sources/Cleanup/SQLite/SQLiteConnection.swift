import CSQLite
import Foundation

/// A value bound to a statement's parameter.
enum SQLiteValue {
    case text(String)
    case integer(Int64)
    case null
}

/// One `sqlite3*`: opened read-write on a file that must exist (never created), with a busy
/// timeout and `apns_bulk_instant` registered. Freed in deinit.
final class SQLiteConnection {
    private let handle: OpaquePointer
    /// The URL as messages show it (`sqlite:app.db`).
    let shown: String

    init(path: String, shown: String) throws(DatabaseError) {
        self.shown = shown
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw DatabaseError(.connection, "\(shown): no such file; give the path of the app's SQLite database "
                                + "(cleanup never creates one)")
        }
        guard !isDirectory.boolValue else { throw DatabaseError(.connection, "\(shown): a directory, not a database file") }
        var opened: OpaquePointer?
        // No SQLITE_OPEN_CREATE: a missing file is an error, never a new empty database. No URI
        // filenames: the path is only a path.
        let status = sqlite3_open_v2(path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let opened else {
            let why = opened.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_close_v2(opened)
            throw DatabaseError(.connection, "\(shown): cannot open it read-write: \(why)")
        }
        handle = opened
        // SQLite opens a write-protected file read-only without a word; cleanup would fail at its first batch.
        guard sqlite3_db_readonly(handle, "main") == 0 else {
            throw DatabaseError(.connection, "\(shown): the file is read-only; cleanup needs to write it (run as its owner)")
        }
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 5000)
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        guard sqlite3_create_function_v2(handle, "apns_bulk_instant", 1, flags, nil, instantFunction, nil, nil, nil) == SQLITE_OK else {
            throw DatabaseError(.connection, "\(shown): cannot register a function: \(String(cString: sqlite3_errmsg(handle)))")
        }
        // Reading the schema proves the file is a database (sqlite3_open_v2 reads nothing yet).
        try execute("SELECT count(*) FROM main.sqlite_master")
    }

    deinit { sqlite3_close_v2(handle) }

    static var libraryVersion: String { String(cString: sqlite3_libversion()) }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes64(handle)) }

    func execute(_ sql: String) throws(DatabaseError) {
        let statement = try prepare(sql)
        while try statement.step() {}
    }

    func prepare(_ sql: String) throws(DatabaseError) -> SQLiteStatement {
        var prepared: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &prepared, nil) == SQLITE_OK, let prepared else {
            throw failure()
        }
        return SQLiteStatement(prepared, connection: self)
    }

    /// The column's declared type and collation, as the catalog records them.
    func columnMetadata(schema: String, table: String, column: String) -> (type: String, collation: String)? {
        var type: UnsafePointer<CChar>?
        var collation: UnsafePointer<CChar>?
        guard sqlite3_table_column_metadata(handle, schema, table, column, &type, &collation, nil, nil, nil) == SQLITE_OK
        else { return nil }
        return (type.map { String(cString: $0) } ?? "", collation.map { String(cString: $0) } ?? "BINARY")
    }

    func failure() -> DatabaseError {
        DatabaseError(.statement, "\(shown): \(String(cString: sqlite3_errmsg(handle)))")
    }
}

/// One `sqlite3_stmt*`, finalized in deinit.
final class SQLiteStatement {
    private let handle: OpaquePointer
    private let connection: SQLiteConnection

    fileprivate init(_ handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds `values` to ?1, ?2, … after resetting the statement.
    func bind(_ values: [SQLiteValue]) throws(DatabaseError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (index, value) in values.enumerated() {
            let position = Int32(index + 1)
            let status: Int32 = switch value {
            case .text(let text): sqlite3_bind_text(handle, position, text, -1, transient)
            case .integer(let number): sqlite3_bind_int64(handle, position, number)
            case .null: sqlite3_bind_null(handle, position)
            }
            guard status == SQLITE_OK else { throw connection.failure() }
        }
    }

    /// Steps once: true while there is a row to read.
    func step() throws(DatabaseError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE:
            // Done: reset at once, so that the statement holds no lock into COMMIT or ROLLBACK.
            sqlite3_reset(handle)
            return false
        default:
            let error = connection.failure()
            sqlite3_reset(handle)
            throw error
        }
    }

    /// The column's value as text; nil for NULL.
    func text(_ column: Int32) -> String? {
        guard sqlite3_column_type(handle, column) != SQLITE_NULL, let text = sqlite3_column_text(handle, column) else { return nil }
        return String(cString: text)
    }

    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
}

/// SQLite's SQLITE_TRANSIENT: the library copies the bound text before the call returns.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// `apns_bulk_instant(x)`: Unix milliseconds of a registered-at value, or NULL when it is not an
/// instant (see `SQLiteInstant`). Deterministic: the same value always gives the same answer.
private func instantFunction(_ context: OpaquePointer?, _ count: Int32, _ arguments: UnsafeMutablePointer<OpaquePointer?>?) {
    guard count == 1, let value = arguments?[0] else { return sqlite3_result_null(context) }
    let milliseconds: Int64? = switch sqlite3_value_type(value) {
    case SQLITE_INTEGER: SQLiteInstant.milliseconds(seconds: sqlite3_value_int64(value))
    case SQLITE_FLOAT: SQLiteInstant.milliseconds(seconds: sqlite3_value_double(value))
    case SQLITE_TEXT:
        sqlite3_value_text(value).flatMap { SQLiteInstant.milliseconds(String(cString: $0)) }
    default: nil
    }
    if let milliseconds { sqlite3_result_int64(context, milliseconds) } else { sqlite3_result_null(context) }
}
