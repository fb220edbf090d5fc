/// What `pg_catalog` says of the app's table: its columns with their kinds, and its primary key.
/// Names are compared as the catalog spells them (`--table Devices` is not `devices`), as SQL
/// does with a quoted identifier, which is how every statement then names them.
extension PostgresDatabase {
    public func describe(_ table: TableName) throws(DatabaseError) -> TableDescription? {
        // Unqualified: the table the session's search_path finds first, as SQL would.
        let found = try connection.execute("""
            SELECT c.oid, n.nspname, c.relname
            FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relname = $1 AND c.relkind IN ('r', 'p', 'v', 'f')
              AND CASE WHEN $2::text IS NULL THEN pg_catalog.pg_table_is_visible(c.oid) ELSE n.nspname = $2 END
            """, [table.name, table.schema], what: "looking up table \(table) in pg_catalog")
        guard found.rowCount > 0, let oid = found.value(0, 0), let name = found.value(0, 2) else { return nil }
        let schema = table.schema == nil ? nil : found.value(0, 1)
        return TableDescription(table: TableName(schema: schema, name: name),
                                columns: try columns(ofRelation: oid, table: table),
                                primaryKey: try primaryKey(ofRelation: oid, table: table))
    }

    private func columns(ofRelation oid: String, table: TableName) throws(DatabaseError) -> [ColumnDescription] {
        // A domain is read as its base type; a nondeterministic collation (PostgreSQL 12 on) may
        // ignore case, as citext does.
        let deterministic = connection.serverVersionNumber >= 120000 ? "coll.collisdeterministic" : "true"
        let rows = try connection.execute("""
            SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod),
                   CASE WHEN t.typtype = 'd' THEN base.typname ELSE t.typname END,
                   COALESCE(\(deterministic), true)
            FROM pg_catalog.pg_attribute a
            JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
            LEFT JOIN pg_catalog.pg_type base ON base.oid = t.typbasetype
            LEFT JOIN pg_catalog.pg_collation coll ON coll.oid = a.attcollation
            WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
            ORDER BY a.attnum
            """, [oid], what: "reading the columns of \(table) from pg_catalog")
        return (0..<rows.rowCount).map { row in
            let baseType = rows.value(row, 2) ?? ""
            let kind: ColumnDescription.Kind = switch baseType {
            case "text", "varchar", "bpchar", "citext": .text
            case "timestamp", "timestamptz": .timestamp
            default: .other
            }
            return ColumnDescription(name: rows.value(row, 0) ?? "", type: rows.value(row, 1) ?? "", kind: kind,
                                     caseInsensitive: baseType == "citext" || rows.value(row, 3) == "f")
        }
    }

    private func primaryKey(ofRelation oid: String, table: TableName) throws(DatabaseError) -> [String] {
        let rows = try connection.execute("""
            SELECT a.attname
            FROM pg_catalog.pg_index i
            CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, position)
            JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
            WHERE i.indrelid = $1 AND i.indisprimary
            ORDER BY k.position
            """, [oid], what: "reading the primary key of \(table) from pg_catalog")
        return (0..<rows.rowCount).compactMap { rows.value($0, 0) }
    }
}
