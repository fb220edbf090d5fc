/// One connection to the app's database, as `cleanup` uses it. Each of PostgreSQL, SQLite and
/// MariaDB/MySQL implements it once, over its C client library, and owns its handle; the cleanup
/// itself (the dead-token list, batches, the counts, the audit file) is written once above it.
///
/// Every statement binds its values as parameters: a token such as `'; DROP TABLE devices; --`
/// is only ever a value. Identifiers come from the catalog (`describe`) and are quoted by the
/// database's own rule.
///
/// The scratch table: each batch's distinct dead tokens go into a temporary table of this
/// connection (`fillScratch`), which `matches` and `apply` join to the app's table on the token
/// column, so that the table's index on that column serves the join: one set-based statement a
/// batch, never one a token. Tokens match case-insensitively: the scratch table holds each
/// token's variants (`ScratchEntry.variants`), and the join compares by plain equality.
public protocol CleanupDatabase: AnyObject {
    /// The server's or library's name and version, for diagnostics (`PostgreSQL 15.18`).
    var product: String { get }

    /// What the catalog says of `table`, or nil when the database has no such table (or view).
    func describe(_ table: TableName) throws(DatabaseError) -> TableDescription?

    /// Creates this connection's scratch table for `plan` (once, before the first batch).
    func prepareScratch(for plan: CleanupPlan) throws(DatabaseError)

    /// Starts a transaction that will write (SQLite takes its write lock here).
    func begin() throws(DatabaseError)
    func commit() throws(DatabaseError)
    func rollback() throws(DatabaseError)

    /// Replaces the scratch table's rows with `entries`' variants (inside the batch's transaction).
    func fillScratch(_ entries: [ScratchEntry], for plan: CleanupPlan) throws(DatabaseError)

    /// Every row of the plan's table that a scratch token matches, within the plan's topic and
    /// environment, each once, with its verdict. `lockingRows` locks them against other writers
    /// until the transaction ends (`SELECT … FOR UPDATE` where the database has it).
    func matches(_ plan: CleanupPlan, lockingRows: Bool) throws(DatabaseError) -> [MatchedRow]

    /// Deletes or marks exactly the rows `matches` calls `affected` or `unjudged`; returns how
    /// many it changed. `runTime` (Unix milliseconds) marks a token without an `unregistered_at`.
    func apply(_ plan: CleanupPlan, runTime: Int64) throws(DatabaseError) -> Int
}

/// A database's refusal or failure, in one line that never holds a password.
public struct DatabaseError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable {
        /// The server cannot be reached, refused the credentials, or the file does not exist.
        case connection
        /// A statement failed (syntax, permission, lock timeout, lost connection mid-way).
        case statement
    }
    public let kind: Kind
    public let description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}

/// A table as `--table` names it: `devices`, or schema-qualified `app.devices`.
public struct TableName: Sendable, Equatable, CustomStringConvertible {
    public let schema: String?
    public let name: String

    public init(schema: String?, name: String) {
        self.schema = schema
        self.name = name
    }

    public var description: String { schema.map { "\($0).\(name)" } ?? name }
}

/// A column as the catalog describes it.
public struct ColumnDescription: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// Text of any length (`text`, `varchar`, `char`, `citext`; SQLite TEXT affinity).
        case text
        /// An instant: PostgreSQL `timestamp`/`timestamptz`, MySQL `DATETIME`/`TIMESTAMP`.
        case timestamp
        /// Anything else (a SQLite column without a declared type is `other`).
        case other
    }

    public let name: String
    /// The type as the catalog spells it (`timestamp with time zone`, `datetime(3)`, `TEXT`).
    public let type: String
    public let kind: Kind
    /// The column's own comparison ignores case (PostgreSQL `citext`, a MySQL `_ci` collation,
    /// SQLite `COLLATE NOCASE`): one variant of each token is enough to match.
    public let caseInsensitive: Bool

    public init(name: String, type: String, kind: Kind, caseInsensitive: Bool) {
        self.name = name
        self.type = type
        self.kind = kind
        self.caseInsensitive = caseInsensitive
    }
}

/// A table as the catalog describes it.
public struct TableDescription: Sendable, Equatable {
    /// The table's name as the catalog spells it (schema given only when `--table` gave one).
    public let table: TableName
    public let columns: [ColumnDescription]
    /// The primary key's columns in key order; empty when the table has none.
    public let primaryKey: [String]

    public init(table: TableName, columns: [ColumnDescription], primaryKey: [String]) {
        self.table = table
        self.columns = columns
        self.primaryKey = primaryKey
    }

    public func column(named name: String) -> ColumnDescription? {
        columns.first { $0.name == name }
    }
}

/// One distinct dead token of a batch, with the line of the list that judges it.
public struct ScratchEntry: Sendable, Equatable {
    /// The token as the list spells it, lowercased (hex tokens; any other text is only a value).
    public let token: String
    public let reason: String
    /// APNs' `unregistered_at` (Unix milliseconds), nil when the line has none.
    public let unregisteredAt: Int64?

    public init(token: String, reason: String, unregisteredAt: Int64?) {
        self.token = token
        self.reason = reason
        self.unregisteredAt = unregisteredAt
    }

    /// The values the scratch table holds for this token: lowercase and uppercase, once when they
    /// are the same or when the column ignores case. A table's row matches at most one of them.
    public func variants(caseInsensitiveColumn: Bool) -> [String] {
        let upper = token.uppercased()
        return caseInsensitiveColumn || upper == token ? [token] : [token, upper]
    }
}

/// What one cleanup does, its names checked against the catalog.
public struct CleanupPlan: Sendable {
    /// A column that must equal a value for a row to be touched (`--topic-column`/`--topic`).
    public struct Restriction: Sendable, Equatable {
        public let column: ColumnDescription
        public let value: String

        public init(column: ColumnDescription, value: String) {
            self.column = column
            self.value = value
        }
    }

    public enum Action: Sendable, Equatable {
        case delete
        /// Set the column to the token's `unregistered_at` (or the run's time), only where it is NULL.
        case mark(ColumnDescription)
    }

    public let table: TableDescription
    public let tokenColumn: ColumnDescription
    /// When set, Apple's rule: a row registered at or after the token's `unregistered_at` is kept.
    public let registeredAtColumn: ColumnDescription?
    public let restrictions: [Restriction]
    public let action: Action
    /// The columns that name a row in the audit file: the primary key, else the token column.
    public let keyColumns: [ColumnDescription]

    public init(table: TableDescription, tokenColumn: ColumnDescription, registeredAtColumn: ColumnDescription?,
                restrictions: [Restriction], action: Action, keyColumns: [ColumnDescription]) {
        self.table = table
        self.tokenColumn = tokenColumn
        self.registeredAtColumn = registeredAtColumn
        self.restrictions = restrictions
        self.action = action
        self.keyColumns = keyColumns
    }
}

/// A row of the app's table that a dead token matched.
public struct MatchedRow: Sendable, Equatable {
    public enum Verdict: String, Sendable, Equatable {
        /// Registered before the token's `unregistered_at` (or its registered-at is NULL, or the
        /// plan has no registered-at column): deleted or marked.
        case affected
        /// The list line has no `unregistered_at`, so the rule cannot judge it: deleted or marked,
        /// and counted apart.
        case unjudged
        /// Registered again at or after the token's `unregistered_at`: kept.
        case kept
        /// `--mark`: its mark column is already set, so it is left as it is.
        case alreadyMarked
        /// Its registered-at value is not an instant the database can read (SQLite text that is not
        /// ISO 8601 nor a number): kept, and counted apart.
        case unreadable
    }

    /// The row's key columns (`CleanupPlan.keyColumns`), as the database renders them as text.
    public let keys: [String?]
    /// The token as the table spells it.
    public let tableToken: String
    /// The scratch entry's token (lowercase) that matched it.
    public let listToken: String
    public let verdict: Verdict

    public init(keys: [String?], tableToken: String, listToken: String, verdict: Verdict) {
        self.keys = keys
        self.tableToken = tableToken
        self.listToken = listToken
        self.verdict = verdict
    }
}
