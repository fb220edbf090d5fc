/// The connection's two temporary tables, in the app table's schema.
///
/// `staging` takes a batch as the list spells it, in one multi-row INSERT of bound parameters.
/// `scratch` is what the cleanup joins: its token column has the character set and collation of
/// the app's token column, so the join is a plain `=` the table's index on that column serves (no
/// "illegal mix of collations", no function on the table's side), and it is UNIQUE under that
/// collation, so each table row meets at most one scratch row (a `_ci` column, or trailing spaces
/// that a PAD SPACE collation ignores, cannot make a row match twice). A variant the column's
/// character set cannot hold (an emoji against `latin1`) is left out rather than stored as `?`.
struct MariaDBScratch {
    let staging: String
    let scratch: String
    /// The token column's character set (`binary` for a binary column), for the check that a
    /// variant survives conversion unchanged.
    let characterSet: String

    /// The longest token the scratch table holds, in characters: an index key's limit (3072 bytes at
    /// 4 bytes a character). A longer list line is not a device token and can match nothing.
    static let longestToken = 768
    /// Rows per INSERT, within the protocol's 65,535 parameters.
    static let rowsPerInsert = 10_000
}

extension MariaDBDatabase {
    public func prepareScratch(for plan: CleanupPlan) throws(DatabaseError) {
        let table = plan.table.table
        let rows = try connection.query("""
            SELECT CHARACTER_SET_NAME, COLLATION_NAME FROM information_schema.COLUMNS
            WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?
            """, [table.schema ?? defaultSchema, table.name, plan.tokenColumn.name]).rows
        guard let row = rows.first else {
            throw DatabaseError(.statement, "\(connection.redactedURL): \(table) has no column \(plan.tokenColumn.name)")
        }
        // Names from the catalog, spliced bare (a character set is not a quotable identifier): so
        // they must be names.
        let isName = { (name: String) in !name.isEmpty && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") } }
        let tokenType: String
        let characterSet: String
        if let set = row[0], let collation = row[1], isName(set), isName(collation) {
            tokenType = "VARCHAR(\(MariaDBScratch.longestToken)) CHARACTER SET \(set) COLLATE \(collation)"
            characterSet = set
        } else {
            tokenType = "VARBINARY(\(MariaDBScratch.longestToken * 4))"
            characterSet = "binary"
        }
        let schema = table.schema.map { mariaDBQuoted($0) + "." } ?? ""
        let names = MariaDBScratch(staging: schema + mariaDBQuoted("apns_bulk_cleanup_staging"),
                                   scratch: schema + mariaDBQuoted("apns_bulk_cleanup_scratch"), characterSet: characterSet)
        let text = "TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL"
        try connection.execute("DROP TEMPORARY TABLE IF EXISTS \(names.staging), \(names.scratch)")
        try connection.execute("""
            CREATE TEMPORARY TABLE \(names.staging) (n INT NOT NULL, variant \(text), list_token \(text),
            unregistered_at DATETIME(3) NULL) ENGINE=InnoDB
            """)
        try connection.execute("""
            CREATE TEMPORARY TABLE \(names.scratch) (token \(tokenType) NOT NULL, list_token \(text),
            unregistered_at DATETIME(3) NULL, UNIQUE KEY (token)) ENGINE=InnoDB
            """)
        scratch = names
    }

    public func fillScratch(_ entries: [ScratchEntry], for plan: CleanupPlan) throws(DatabaseError) {
        guard let names = scratch else { preconditionFailure("fillScratch before prepareScratch") }
        try connection.execute("DELETE FROM \(names.staging)")
        try connection.execute("DELETE FROM \(names.scratch)")
        var rows: [[String?]] = []
        for entry in entries {
            let unregisteredAt = entry.unregisteredAt.map(mariaDBDateTime(milliseconds:))
            for variant in entry.variants(caseInsensitiveColumn: plan.tokenColumn.caseInsensitive)
            where variant.unicodeScalars.count <= MariaDBScratch.longestToken {
                rows.append([String(rows.count), variant, entry.token, unregisteredAt])
            }
        }
        var start = 0
        while start < rows.count {
            let chunk = rows[start..<min(start + MariaDBScratch.rowsPerInsert, rows.count)]
            let markers = Array(repeating: "(?, ?, ?, ?)", count: chunk.count).joined(separator: ", ")
            _ = try connection.query("INSERT INTO \(names.staging) (n, variant, list_token, unregistered_at) VALUES \(markers)",
                                     chunk.flatMap { $0 })
            start += chunk.count
        }
        try connection.execute("""
            INSERT IGNORE INTO \(names.scratch) (token, list_token, unregistered_at)
            SELECT variant, list_token, unregistered_at FROM \(names.staging)
            WHERE CAST(CONVERT(CONVERT(variant USING \(names.characterSet)) USING utf8mb4) AS BINARY) = CAST(variant AS BINARY)
            ORDER BY n
            """)
    }
}

/// Unix milliseconds as a `DATETIME(3)` literal's text in UTC (`2025-12-22 16:46:28.279`), held
/// within DATETIME's range (years 1000 to 9999): an instant before it is still earlier than every
/// row, one after it still later.
func mariaDBDateTime(milliseconds: Int64) -> String {
    let clamped = min(max(milliseconds, -30_610_224_000_000), 253_402_300_799_999)
    let millisecondsADay: Int64 = 86_400_000
    var days = clamped / millisecondsADay
    var inDay = clamped % millisecondsADay
    if inDay < 0 {
        days -= 1
        inDay += millisecondsADay
    }
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let shifted = days + 719_468
    let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthFromMarch = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
    let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    func padded(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(width - digits.count, 0)) + digits
    }
    return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2)) \(padded(inDay / 3_600_000, 2)):"
        + "\(padded(inDay / 60_000 % 60, 2)):\(padded(inDay / 1000 % 60, 2)).\(padded(inDay % 1000, 3))"
}
