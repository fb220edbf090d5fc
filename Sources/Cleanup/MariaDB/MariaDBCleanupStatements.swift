/// The join, the verdict and the condition of what changes, written once for `matches` and `apply`,
/// so that what `matches` calls affected is exactly what `apply` deletes or marks.
///
/// The scratch table drives the join (STRAIGHT_JOIN): each scratch token looks its rows up by the
/// table's index on the token column (forced: `MariaDBScratch.tokenIndex`), or, without one, the
/// table is read once per join buffer.
/// Instants compare as DATETIME values in the session's UTC: a `DATETIME(6)` registered-at against
/// the list's whole milliseconds is earlier exactly when its own millisecond is, so a registration
/// in the same millisecond as `unregistered_at` is kept and a sub-millisecond part cannot flip it.
struct MariaDBCleanupStatements {
    /// `scratch AS s STRAIGHT_JOIN table AS t ON <tokens equal>`.
    let tables: String
    /// The topic's and environment's conditions (`TRUE` without them), and their parameters.
    let restrictions: String
    let restrictionValues: [String?]
    /// The row's verdict, as `MatchedRow.Verdict`'s raw value.
    let verdict: String
    /// True exactly for the rows the verdict calls `affected` or `unjudged`.
    let changes: String

    init(plan: CleanupPlan, scratch: MariaDBScratch) {
        func column(_ description: ColumnDescription) -> String { "t." + mariaDBQuoted(description.name) }
        let token = column(plan.tokenColumn)
        let hint = scratch.tokenIndex.map { " FORCE INDEX (\(mariaDBQuoted($0)))" } ?? ""
        tables = "\(scratch.scratch) AS s STRAIGHT_JOIN \(mariaDBQuoted(plan.table.table)) AS t\(hint) ON \(token) = s.token"
        restrictions = plan.restrictions.isEmpty ? "TRUE"
            : plan.restrictions.map { "\(column($0.column)) = ?" }.joined(separator: " AND ")
        restrictionValues = plan.restrictions.map(\.value)

        var cases: [String] = []
        var conditions: [String] = []
        if case .mark(let mark) = plan.action {
            cases.append("WHEN \(column(mark)) IS NOT NULL THEN '\(MatchedRow.Verdict.alreadyMarked.rawValue)'")
            conditions.append("\(column(mark)) IS NULL")
        }
        cases.append("WHEN s.unregistered_at IS NULL THEN '\(MatchedRow.Verdict.unjudged.rawValue)'")
        if let registeredAt = plan.registeredAtColumn.map(column) {
            let earlier = "\(registeredAt) IS NULL OR \(registeredAt) < s.unregistered_at"
            cases.append("WHEN \(earlier) THEN '\(MatchedRow.Verdict.affected.rawValue)'")
            cases.append("ELSE '\(MatchedRow.Verdict.kept.rawValue)'")
            conditions.append("(s.unregistered_at IS NULL OR \(earlier))")
        } else {
            cases.append("ELSE '\(MatchedRow.Verdict.affected.rawValue)'")
        }
        verdict = "CASE " + cases.joined(separator: " ") + " END"
        changes = conditions.isEmpty ? "TRUE" : conditions.joined(separator: " AND ")
    }
}

extension MariaDBDatabase {
    public func matches(_ plan: CleanupPlan, lockingRows: Bool) throws(DatabaseError) -> [MatchedRow] {
        let (sql, parameters) = matchesStatement(plan, lockingRows: lockingRows)
        let rows = try connection.query(sql, parameters).rows
        let keyCount = plan.keyColumns.count
        return try rows.map { row throws(DatabaseError) in
            guard let verdict = row[keyCount + 2].flatMap(MatchedRow.Verdict.init(rawValue:)) else {
                throw DatabaseError(.statement, "\(connection.redactedURL): a matched row came back without its verdict")
            }
            return MatchedRow(keys: Array(row[0..<keyCount]), tableToken: row[keyCount] ?? "",
                              listToken: row[keyCount + 1] ?? "", verdict: verdict)
        }
    }

    public func apply(_ plan: CleanupPlan, runTime: Int64) throws(DatabaseError) -> Int {
        let (sql, parameters) = applyStatement(plan, runTime: runTime)
        return try connection.query(sql, parameters).changedRows
    }

    /// The SELECT of `matches`: the key columns, the table's token and the list's, as text, and the verdict.
    func matchesStatement(_ plan: CleanupPlan, lockingRows: Bool) -> (sql: String, parameters: [String?]) {
        let sql = statements(for: plan)
        let columns = (plan.keyColumns + [plan.tokenColumn]).map { "CAST(t.\(mariaDBQuoted($0.name)) AS CHAR)" }
            + ["s.list_token", sql.verdict]
        return ("""
            SELECT \(columns.joined(separator: ", ")) FROM \(sql.tables) WHERE \(sql.restrictions)\(lockingRows ? " FOR UPDATE" : "")
            """, sql.restrictionValues)
    }

    /// The DELETE or UPDATE of `apply`: the same join, and the rows whose verdict is affected or unjudged.
    func applyStatement(_ plan: CleanupPlan, runTime: Int64) -> (sql: String, parameters: [String?]) {
        let sql = statements(for: plan)
        switch plan.action {
        case .delete:
            return ("DELETE t FROM \(sql.tables) WHERE \(sql.restrictions) AND \(sql.changes)", sql.restrictionValues)
        case .mark(let mark):
            return ("""
                UPDATE \(sql.tables) SET t.\(mariaDBQuoted(mark.name)) = COALESCE(s.unregistered_at, \(mariaDBInstant(microseconds: "?")))
                WHERE \(sql.restrictions) AND \(sql.changes)
                """, [mariaDBMicroseconds(milliseconds: runTime)] + sql.restrictionValues)
        }
    }

    private func statements(for plan: CleanupPlan) -> MariaDBCleanupStatements {
        guard let scratch else { preconditionFailure("matches or apply before prepareScratch") }
        return MariaDBCleanupStatements(plan: plan, scratch: scratch)
    }
}
