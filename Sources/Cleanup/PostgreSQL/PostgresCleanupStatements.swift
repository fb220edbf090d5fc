import Foundation

/// The cleanup's statements: the scratch table, the matches with their verdicts, the delete or
/// mark. The SQL holds only identifiers the catalog gave (quoted) and placeholders; each value is a
/// text parameter.
///
/// The scratch table's `variant` column has the token column's own type (without its length: a
/// longer token is only a value that matches nothing; `character` without one is `bpchar`) and
/// collation, so `t.token = s.variant` is the column's own `=`: a join the table's btree index on
/// the token column serves, one lookup per variant, instead of `lower(t.token)` on every row.
extension PostgresDatabase {
    static let scratch = "pg_temp.apns_bulk_scratch"

    public func prepareScratch(for plan: CleanupPlan) throws(DatabaseError) {
        let table = postgresQuoted(plan.table.table)
        let type = try connection.execute("""
            SELECT CASE WHEN base = 'pg_catalog.bpchar'::pg_catalog.regtype THEN 'bpchar'
                        ELSE pg_catalog.format_type(base, NULL) END,
                   CASE WHEN a.attcollation = 0 THEN ''
                        ELSE ' COLLATE ' || pg_catalog.quote_ident(n.nspname) || '.' || pg_catalog.quote_ident(c.collname) END
            FROM pg_catalog.pg_attribute a
            JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
            CROSS JOIN LATERAL (SELECT CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE a.atttypid END AS base) AS b
            LEFT JOIN pg_catalog.pg_collation c ON c.oid = a.attcollation
            LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.collnamespace
            WHERE a.attrelid = $1::regclass AND a.attname = $2 AND NOT a.attisdropped
            """, [table, plan.tokenColumn.name], what: "reading the type of \(plan.table.table).\(plan.tokenColumn.name)")
        guard type.rowCount == 1, let variantType = type.value(0, 0) else {
            throw DatabaseError(.statement, "PostgreSQL: \(plan.table.table) has no column \(plan.tokenColumn.name)")
        }
        try connection.execute("DROP TABLE IF EXISTS \(Self.scratch)", what: "dropping an earlier scratch table")
        try connection.execute("""
            CREATE TEMPORARY TABLE \(Self.scratch) (
                variant \(variantType)\(type.value(0, 1) ?? "") NOT NULL, token text NOT NULL,
                reason text NOT NULL, unregistered_at timestamptz)
            """, what: "creating the scratch table")
    }

    public func fillScratch(_ entries: [ScratchEntry], for plan: CleanupPlan) throws(DatabaseError) {
        try connection.execute("TRUNCATE \(Self.scratch)", what: "emptying the scratch table")
        var variants: [String?] = [], tokens: [String?] = [], reasons: [String?] = [], instants: [String?] = []
        // PostgreSQL text cannot hold a NUL, so such a token matches no row: it is left out.
        for entry in entries where !entry.token.utf8.contains(0) {
            for variant in entry.variants(caseInsensitiveColumn: plan.tokenColumn.caseInsensitive) {
                variants.append(variant)
                tokens.append(entry.token)
                reasons.append(entry.reason)
                instants.append(entry.unregisteredAt.map { String($0) })
            }
        }
        // One statement of four parameters, each an array of the batch's values: parsed and
        // planned once, where a VALUES row per variant cost more than the join itself.
        try connection.execute("""
            INSERT INTO \(Self.scratch) (variant, token, reason, unregistered_at)
            SELECT v, t, r, \(Self.instant("u"))
            FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::text[]),
                            pg_catalog.unnest($4::bigint[])) AS x(v, t, r, u)
            """, [variants, tokens, reasons, instants].map(Self.arrayLiteral), what: "filling the scratch table")
        // The planner then knows the batch is small next to the table, and looks each token up.
        try connection.execute("ANALYZE \(Self.scratch)", what: "analyzing the scratch table")
    }

    /// `values` as a PostgreSQL array's text form, a parameter's value: each element in double
    /// quotes with its quotes and backslashes escaped, nil as NULL.
    static func arrayLiteral(_ values: [String?]) -> String {
        var literal: [UInt8] = [UInt8(ascii: "{")]
        literal.reserveCapacity(values.reduce(2) { $0 + ($1?.utf8.count ?? 4) + 3 })
        for (index, value) in values.enumerated() {
            if index > 0 { literal.append(UInt8(ascii: ",")) }
            guard let value else { literal += "NULL".utf8; continue }
            literal.append(UInt8(ascii: "\""))
            for byte in value.utf8 {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { literal.append(UInt8(ascii: "\\")) }
                literal.append(byte)
            }
            literal.append(UInt8(ascii: "\""))
        }
        literal.append(UInt8(ascii: "}"))
        return String(decoding: literal, as: UTF8.self)
    }

    public func matches(_ plan: CleanupPlan, lockingRows: Bool) throws(DatabaseError) -> [MatchedRow] {
        let statement = CleanupStatement(plan)
        let keys = plan.keyColumns.count
        let rows = try connection.execute(matchesSQL(plan, statement, lockingRows: lockingRows), statement.parameters,
                                          what: "finding the batch's rows in \(plan.table.table)")
        return try (0..<rows.rowCount).map { row throws(DatabaseError) in
            let verdictText = rows.value(row, keys + 2) ?? ""
            guard let verdict = MatchedRow.Verdict(rawValue: verdictText) else {
                throw DatabaseError(.statement, "PostgreSQL: unexpected verdict \(verdictText)")
            }
            return MatchedRow(keys: (0..<keys).map { rows.value(row, $0) }, tableToken: rows.value(row, keys) ?? "",
                              listToken: rows.value(row, keys + 1) ?? "", verdict: verdict)
        }
    }

    /// The plans PostgreSQL makes for `matches` and for `apply` on the scratch table as it is now
    /// (for the test that the token column's index serves both joins).
    func explain(_ plan: CleanupPlan) throws(DatabaseError) -> (matches: String, apply: String) {
        let statement = CleanupStatement(plan)
        let (applySQL, applyParameters) = self.applySQL(plan, statement, runTime: 0)
        func explained(_ sql: String, _ parameters: [String?]) throws(DatabaseError) -> String {
            let rows = try connection.execute("EXPLAIN " + sql, parameters, what: "explaining a statement on \(plan.table.table)")
            return (0..<rows.rowCount).compactMap { rows.value($0, 0) }.joined(separator: "\n")
        }
        return (try explained(matchesSQL(plan, statement, lockingRows: true), statement.parameters),
                try explained(applySQL, applyParameters))
    }

    private func matchesSQL(_ plan: CleanupPlan, _ statement: CleanupStatement, lockingRows: Bool) -> String {
        let columns = plan.keyColumns.map { "t.\(postgresQuoted($0.name))::text" }
            + ["t.\(postgresQuoted(plan.tokenColumn.name))::text", "s.token", statement.verdict]
        return """
            SELECT \(columns.joined(separator: ", "))
            FROM \(postgresQuoted(plan.table.table)) AS t JOIN \(Self.scratch) AS s ON \(statement.join)
            WHERE \(statement.restriction)\(lockingRows ? " FOR UPDATE OF t" : "")
            """
    }

    public func apply(_ plan: CleanupPlan, runTime: Int64) throws(DatabaseError) -> Int {
        let (sql, parameters) = applySQL(plan, CleanupStatement(plan), runTime: runTime)
        let what = plan.action == .delete ? "deleting the batch's rows from" : "marking the batch's rows in"
        return try connection.execute(sql, parameters, what: "\(what) \(plan.table.table)").changedRows
    }

    private func applySQL(_ plan: CleanupPlan, _ statement: CleanupStatement, runTime: Int64) -> (String, [String?]) {
        let table = postgresQuoted(plan.table.table)
        let condition = "\(statement.join) AND \(statement.restriction) AND \(statement.changes)"
        switch plan.action {
        case .delete:
            return ("DELETE FROM \(table) AS t USING \(Self.scratch) AS s WHERE \(condition)", statement.parameters)
        case .mark(let column):
            let runTimeParameter = Self.instant("$\(statement.parameters.count + 1)::bigint")
            return ("""
                UPDATE \(table) AS t SET \(postgresQuoted(column.name)) = COALESCE(s.unregistered_at, \(runTimeParameter))
                FROM \(Self.scratch) AS s WHERE \(condition)
                """, statement.parameters + [String(runTime)])
        }
    }

    /// The `timestamptz` of `milliseconds` (a `bigint` of Unix milliseconds): whole seconds (exact
    /// in a double) plus the milliseconds as an interval, so a registered-at equal to it stays equal.
    static func instant(_ milliseconds: String) -> String {
        "(pg_catalog.to_timestamp((\(milliseconds) / 1000)::float8) + (\(milliseconds) % 1000) * interval '1 millisecond')"
    }
}

/// The parts of `matches` and `apply` that must say the same thing: the join, the plan's
/// restrictions, and which rows change — the rows whose verdict is `affected` or `unjudged`.
private struct CleanupStatement {
    let join: String
    let restriction: String
    let parameters: [String?]
    let verdict: String
    let changes: String

    init(_ plan: CleanupPlan) {
        join = "t.\(postgresQuoted(plan.tokenColumn.name)) = s.variant"
        restriction = plan.restrictions.isEmpty ? "TRUE" : plan.restrictions.enumerated()
            .map { "t.\(postgresQuoted($0.element.column.name)) = $\($0.offset + 1)" }.joined(separator: " AND ")
        parameters = plan.restrictions.map(\.value)
        // Instants compared as instants: a `timestamp` column is read in the session's UTC.
        let ruleAffects = plan.registeredAtColumn.map { column in
            "(t.\(postgresQuoted(column.name)) IS NULL OR t.\(postgresQuoted(column.name)) < s.unregistered_at)"
        } ?? "TRUE"
        var verdict = "CASE"
        var changes = "(s.unregistered_at IS NULL OR \(ruleAffects))"
        if case .mark(let column) = plan.action {
            verdict += " WHEN t.\(postgresQuoted(column.name)) IS NOT NULL THEN 'alreadyMarked'"
            changes = "t.\(postgresQuoted(column.name)) IS NULL AND \(changes)"
        }
        verdict += " WHEN s.unregistered_at IS NULL THEN 'unjudged' WHEN \(ruleAffects) THEN 'affected' ELSE 'kept' END"
        self.verdict = verdict
        self.changes = changes
    }
}

/// An identifier as PostgreSQL reads it verbatim: in double quotes, each double quote doubled.
private func postgresQuoted(_ identifier: String) -> String {
    "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

private func postgresQuoted(_ table: TableName) -> String {
    table.schema.map { "\(postgresQuoted($0)).\(postgresQuoted(table.name))" } ?? postgresQuoted(table.name)
}
