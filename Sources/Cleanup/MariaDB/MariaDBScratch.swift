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
    /// An index of the app's table whose first column is the token column, if it has one: the join
    /// is forced onto it. InnoDB locks every row a locking read examines, so a plan that scanned
    /// the table (which the optimizer picks for a small one) would lock it all and wait on any
    /// row the app holds, however unrelated to the batch.
    let tokenIndex: String?

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
        switch (row[0], row[1]) {
        case let (set?, collation?):
            guard isName(set), isName(collation) else {
                throw DatabaseError(.statement, "\(connection.redactedURL): the token column's character set \(set) "
                                    + "or collation \(collation) is not a name this program can write")
            }
            tokenType = "VARCHAR(\(MariaDBScratch.longestToken)) CHARACTER SET \(set) COLLATE \(collation)"
            characterSet = set
        default:
            tokenType = "VARBINARY(\(MariaDBScratch.longestToken * 4))"
            characterSet = "binary"
        }
        let tokenIndex = try connection.query("""
            SELECT INDEX_NAME FROM information_schema.STATISTICS
            WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ? AND SEQ_IN_INDEX = 1
            ORDER BY NON_UNIQUE, INDEX_NAME LIMIT 1
            """, [table.schema ?? defaultSchema, table.name, plan.tokenColumn.name]).rows.first?[0] ?? nil
        let schema = table.schema.map { mariaDBQuoted($0) + "." } ?? ""
        let names = MariaDBScratch(staging: schema + mariaDBQuoted("apns_bulk_cleanup_staging"),
                                   scratch: schema + mariaDBQuoted("apns_bulk_cleanup_scratch"), characterSet: characterSet,
                                   tokenIndex: tokenIndex)
        let text = "TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL"
        try connection.execute("DROP TEMPORARY TABLE IF EXISTS \(names.staging), \(names.scratch)")
        try connection.execute("""
            CREATE TEMPORARY TABLE \(names.staging) (n INT NOT NULL, variant \(text), list_token \(text),
            unregistered_us BIGINT NULL) ENGINE=InnoDB
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
            let unregisteredAt = entry.unregisteredAt.map(mariaDBMicroseconds(milliseconds:))
            for variant in entry.variants(caseInsensitiveColumn: plan.tokenColumn.caseInsensitive)
            where variant.unicodeScalars.count <= MariaDBScratch.longestToken {
                rows.append([String(rows.count), variant, entry.token, unregisteredAt])
            }
        }
        var start = 0
        while start < rows.count {
            let chunk = rows[start..<min(start + MariaDBScratch.rowsPerInsert, rows.count)]
            let markers = Array(repeating: "(?, ?, ?, ?)", count: chunk.count).joined(separator: ", ")
            _ = try connection.query("INSERT INTO \(names.staging) (n, variant, list_token, unregistered_us) VALUES \(markers)",
                                     chunk.flatMap { $0 })
            start += chunk.count
        }
        try connection.execute("""
            INSERT IGNORE INTO \(names.scratch) (token, list_token, unregistered_at)
            SELECT variant, list_token, \(mariaDBInstant(microseconds: "unregistered_us")) FROM \(names.staging)
            WHERE CAST(CONVERT(CONVERT(variant USING \(names.characterSet)) USING utf8mb4) AS BINARY) = CAST(variant AS BINARY)
            ORDER BY n
            """)
    }
}

/// An instant as MariaDB computes it from Unix microseconds (a bound parameter or a column): a
/// DATETIME in UTC, exact to the microsecond, by the server's own calendar.
func mariaDBInstant(microseconds: String) -> String {
    "DATE_ADD(TIMESTAMP'1970-01-01 00:00:00', INTERVAL \(microseconds) MICROSECOND)"
}

/// Unix milliseconds as microseconds' text, held within DATETIME's range (years 1000 to 9999): an
/// instant before it is still earlier than every row, one after it still later.
func mariaDBMicroseconds(milliseconds: Int64) -> String {
    String(min(max(milliseconds, -30_610_224_000_000), 253_402_300_799_999) * 1000)
}
