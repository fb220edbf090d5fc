import Foundation

/// The app's MariaDB or MySQL database, through MariaDB Connector/C.
///
/// The scratch table (`prepareScratch`, `fillScratch`) and the cleanup's two statements (`matches`,
/// `apply`) are in files of their own; this one connects, describes a table from the catalog and
/// draws a transaction's edges.
public final class MariaDBDatabase: CleanupDatabase {
    let connection: MariaDBConnection
    /// The URL's database: where a table named without a schema lives.
    let defaultSchema: String
    /// The scratch table's names and the token column's character set, set by `prepareScratch`.
    var scratch: MariaDBScratch?

    /// Connects as the URL says, with `password`, or when that is nil the environment's `MYSQL_PWD`
    /// (as MariaDB's own client reads it), or none.
    public init(url: DatabaseURL, password: String?) throws(DatabaseError) {
        let password = password ?? ProcessInfo.processInfo.environment["MYSQL_PWD"]
        connection = try MariaDBConnection(url: url, password: password)
        defaultSchema = url.database
    }

    public var product: String { connection.product }

    public func begin() throws(DatabaseError) { try connection.execute("START TRANSACTION") }
    public func commit() throws(DatabaseError) { try connection.execute("COMMIT") }
    public func rollback() throws(DatabaseError) { try connection.execute("ROLLBACK") }

    /// The table's columns and primary key from information_schema, or nil when the schema (the one
    /// `--table` names, else the URL's database) has no such table or view. Names compare as the
    /// server compares them (case-sensitively on Linux, where tables are files).
    public func describe(_ table: TableName) throws(DatabaseError) -> TableDescription? {
        let schema = table.schema ?? defaultSchema
        guard !schema.isEmpty else { return nil }
        let columns = try connection.query("""
            SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, COLLATION_NAME
            FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION
            """, [schema, table.name]).rows
        guard let first = columns.first, let catalogSchema = first[0], let catalogName = first[1] else { return nil }
        let key = try connection.query("""
            SELECT COLUMN_NAME FROM information_schema.STATISTICS
            WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX
            """, [catalogSchema, catalogName]).rows
        return TableDescription(
            table: TableName(schema: table.schema == nil ? nil : catalogSchema, name: catalogName),
            columns: columns.map { row in
                let type = row[3]?.lowercased() ?? ""
                return ColumnDescription(name: row[2] ?? "", type: row[4] ?? type, kind: Self.kind(ofDataType: type),
                                         caseInsensitive: row[5]?.hasSuffix("_ci") ?? false)
            },
            primaryKey: key.compactMap { $0[0] })
    }

    private static func kind(ofDataType type: String) -> ColumnDescription.Kind {
        switch type {
        case "char", "varchar", "tinytext", "text", "mediumtext", "longtext": .text
        case "datetime", "timestamp": .timestamp
        default: .other
        }
    }
}

/// An identifier as MariaDB and MySQL quote it: in backticks, a backtick inside doubled.
func mariaDBQuoted(_ identifier: String) -> String {
    "`" + identifier.replacingOccurrences(of: "`", with: "``") + "`"
}

/// A table's name quoted, with its schema when it has one.
func mariaDBQuoted(_ table: TableName) -> String {
    table.schema.map { mariaDBQuoted($0) + "." + mariaDBQuoted(table.name) } ?? mariaDBQuoted(table.name)
}
