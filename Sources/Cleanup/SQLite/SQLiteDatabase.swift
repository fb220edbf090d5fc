import Foundation

/// `cleanup` over a SQLite file, through libsqlite3. The file must exist (it is never created);
/// each batch takes the write lock (`BEGIN IMMEDIATE`), waiting up to 5 s for another writer. The
/// scratch table is TEMP (outside the file). Registered-at values are read as instants by
/// `apns_bulk_instant` and compared in milliseconds; rows are deleted by rowid (by primary key in
/// a WITHOUT ROWID table); `--mark` writes ISO 8601 text (`2025-12-22T16:46:28.279Z`).
public final class SQLiteDatabase: CleanupDatabase {
    private let connection: SQLiteConnection
    /// Built by `prepareScratch` for the plan.
    private var statements: Statements?

    private struct Statements {
        let fill: SQLiteStatement
        let matches: SQLiteStatement
        let apply: SQLiteStatement
        let restrictionValues: [SQLiteValue]
    }

    public init(url: DatabaseURL, password: String?) throws(DatabaseError) {
        connection = try SQLiteConnection(path: url.database, shown: url.redacted)
    }

    public var product: String { "SQLite \(SQLiteConnection.libraryVersion)" }

    public func describe(_ table: TableName) throws(DatabaseError) -> TableDescription? {
        let schema = table.schema ?? "main"
        let schemas = try connection.prepare("SELECT name FROM pragma_database_list WHERE name = ?1 COLLATE NOCASE")
        try schemas.bind([.text(schema)])
        guard try schemas.step(), let catalogSchema = schemas.text(0) else { return nil }
        let tables = try connection.prepare("SELECT name FROM \(Self.quoted(catalogSchema)).sqlite_master "
                                            + "WHERE type = 'table' AND name = ?1 COLLATE NOCASE")
        try tables.bind([.text(table.name)])
        guard try tables.step(), let name = tables.text(0) else { return nil }
        let info = try connection.prepare("SELECT name, type, pk FROM pragma_table_info(?1, ?2) ORDER BY cid")
        try info.bind([.text(name), .text(catalogSchema)])
        var columns: [ColumnDescription] = []
        var keys: [(position: Int64, name: String)] = []
        while try info.step() {
            guard let column = info.text(0) else { continue }
            let declared = info.text(1) ?? ""
            let collation = connection.columnMetadata(schema: catalogSchema, table: name, column: column)?.collation ?? "BINARY"
            columns.append(ColumnDescription(name: column, type: declared, kind: Self.kind(declared),
                                             caseInsensitive: collation.uppercased() == "NOCASE"))
            if info.integer(2) > 0 { keys.append((info.integer(2), column)) }
        }
        return TableDescription(table: TableName(schema: table.schema == nil ? nil : catalogSchema, name: name),
                                columns: columns, primaryKey: keys.sorted { $0.position < $1.position }.map(\.name))
    }

    /// SQLite's affinity rules, with DATE or TIME in a declared type read as a timestamp.
    static func kind(_ declared: String) -> ColumnDescription.Kind {
        let type = declared.uppercased()
        if type.contains("INT") { return .other }
        if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { return .text }
        if type.contains("DATE") || type.contains("TIME") { return .timestamp }
        return .other
    }

    public func prepareScratch(for plan: CleanupPlan) throws(DatabaseError) {
        try connection.execute("CREATE TEMP TABLE IF NOT EXISTS apns_bulk_scratch "
                               + "(variant TEXT PRIMARY KEY, token TEXT NOT NULL, reason TEXT NOT NULL, unregistered_at INTEGER)")
        let table = Self.qualified(plan.table.table)
        let locators = try locatorColumns(plan)
        let select = Self.judgingSelect(plan, table: table, locators: locators)
        let located = locators.indices.map { "apns_bulk_loc\($0)" }.joined(separator: ", ")
        let chosen = "SELECT \(located) FROM (\(select)) WHERE verdict IN ('affected', 'unjudged')"
        let applySQL: String
        switch plan.action {
        case .delete:
            applySQL = "DELETE FROM \(table) WHERE (\(locators.joined(separator: ", "))) IN (\(chosen))"
        case .mark(let column):
            let mark = Self.quoted(column.name)
            let target = locators.map { "apns_bulk_target.\($0)" }.joined(separator: ", ")
            let runTime = plan.restrictions.count + 1
            applySQL = """
                UPDATE \(table) AS apns_bulk_target SET \(mark) = \
                strftime('%Y-%m-%dT%H:%M:%S', m.at / 1000, 'unixepoch') || printf('.%03dZ', m.at % 1000) \
                FROM (SELECT \(located), coalesce(list_unregistered_at, ?\(runTime)) AS at FROM (\(select)) \
                WHERE verdict IN ('affected', 'unjudged')) AS m \
                WHERE (\(target)) = (\(locators.indices.map { "m.apns_bulk_loc\($0)" }.joined(separator: ", "))) \
                AND apns_bulk_target.\(mark) IS NULL
                """
        }
        statements = Statements(
            fill: try connection.prepare("INSERT OR IGNORE INTO temp.apns_bulk_scratch VALUES (?1, ?2, ?3, ?4)"),
            matches: try connection.prepare(select),
            apply: try connection.prepare(applySQL),
            restrictionValues: plan.restrictions.map { .text($0.value) })
    }

    /// What names a row for the delete or mark: its rowid, or its primary key in a WITHOUT ROWID table.
    private func locatorColumns(_ plan: CleanupPlan) throws(DatabaseError) -> [String] {
        let list = try connection.prepare("SELECT wr FROM pragma_table_list WHERE name = ?1 AND schema = ?2")
        try list.bind([.text(plan.table.table.name), .text(plan.table.table.schema ?? "main")])
        let withoutRowid = try list.step() && list.integer(0) != 0
        if withoutRowid { return plan.table.primaryKey.map(Self.quoted) }
        let names = Set(plan.table.columns.map { $0.name.lowercased() })
        // A column may itself be called rowid: then one of its other names is the row's own.
        guard let rowid = ["rowid", "_rowid_", "oid"].first(where: { !names.contains($0) }) else {
            throw DatabaseError(.statement, "\(connection.shown): the table has columns named rowid, _rowid_ and oid; "
                                + "cleanup cannot name its rows")
        }
        return [rowid]
    }

    /// Every matched row: its keys as text, its token, the list token, its verdict, the list's
    /// unregistered_at and its locator columns (apns_bulk_loc0…).
    private static func judgingSelect(_ plan: CleanupPlan, table: String, locators: [String]) -> String {
        let token = "t." + quoted(plan.tokenColumn.name)
        var verdict = "CASE"
        if case .mark(let column) = plan.action { verdict += " WHEN t.\(quoted(column.name)) IS NOT NULL THEN 'alreadyMarked'" }
        verdict += " WHEN s.unregistered_at IS NULL THEN 'unjudged'"
        if let registeredAt = plan.registeredAtColumn {
            let column = "t." + quoted(registeredAt.name)
            verdict += " WHEN \(column) IS NULL THEN 'affected'"
                + " WHEN apns_bulk_instant(\(column)) IS NULL THEN 'unreadable'"
                + " WHEN apns_bulk_instant(\(column)) < s.unregistered_at THEN 'affected' ELSE 'kept' END"
        } else {
            verdict += " ELSE 'affected' END"
        }
        let keys = plan.keyColumns.map { "CAST(t.\(quoted($0.name)) AS TEXT)" }
        let located = locators.enumerated().map { "t.\($1) AS apns_bulk_loc\($0)" }
        let restricted = plan.restrictions.enumerated().map { "t.\(quoted($1.column.name)) = ?\($0 + 1)" }
        // The scratch table drives the join (CROSS JOIN keeps it outer), so that each of its few
        // rows is looked up through the table's index on the token column.
        return "SELECT \((keys + [token, "s.token", verdict + " AS verdict", "s.unregistered_at AS list_unregistered_at"] + located).joined(separator: ", ")) "
            + "FROM temp.apns_bulk_scratch AS s CROSS JOIN \(table) AS t ON \(token) = s.variant"
            + (restricted.isEmpty ? "" : " WHERE " + restricted.joined(separator: " AND "))
    }

    public func begin() throws(DatabaseError) { try connection.execute("BEGIN IMMEDIATE") }
    public func commit() throws(DatabaseError) { try connection.execute("COMMIT") }
    public func rollback() throws(DatabaseError) { try connection.execute("ROLLBACK") }

    public func fillScratch(_ entries: [ScratchEntry], for plan: CleanupPlan) throws(DatabaseError) {
        let statements = try prepared()
        try connection.execute("DELETE FROM temp.apns_bulk_scratch")
        for entry in entries {
            for variant in entry.variants(caseInsensitiveColumn: plan.tokenColumn.caseInsensitive) {
                try statements.fill.bind([.text(variant), .text(entry.token), .text(entry.reason),
                                          entry.unregisteredAt.map { .integer($0) } ?? .null])
                while try statements.fill.step() {}
            }
        }
    }

    public func matches(_ plan: CleanupPlan, lockingRows: Bool) throws(DatabaseError) -> [MatchedRow] {
        let statements = try prepared()
        try statements.matches.bind(statements.restrictionValues)
        let keyCount = Int32(plan.keyColumns.count)
        var rows: [MatchedRow] = []
        while try statements.matches.step() {
            let keys = (0..<keyCount).map { statements.matches.text($0) }
            guard let verdict = statements.matches.text(keyCount + 2).flatMap(MatchedRow.Verdict.init(rawValue:)) else {
                throw DatabaseError(.statement, "\(connection.shown): a matched row without a verdict")
            }
            rows.append(MatchedRow(keys: keys, tableToken: statements.matches.text(keyCount) ?? "",
                                   listToken: statements.matches.text(keyCount + 1) ?? "", verdict: verdict))
        }
        return rows
    }

    public func apply(_ plan: CleanupPlan, runTime: Int64) throws(DatabaseError) -> Int {
        let statements = try prepared()
        var values = statements.restrictionValues
        if case .mark = plan.action { values.append(.integer(runTime)) }
        try statements.apply.bind(values)
        while try statements.apply.step() {}
        return connection.changes
    }

    private func prepared() throws(DatabaseError) -> Statements {
        guard let statements else { throw DatabaseError(.statement, "\(connection.shown): the scratch table is not prepared") }
        return statements
    }

    static func quoted(_ identifier: String) -> String { "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    static func qualified(_ table: TableName) -> String { quoted(table.schema ?? "main") + "." + quoted(table.name) }
}
