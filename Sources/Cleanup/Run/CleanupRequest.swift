/// What the command line asks of a cleanup, by name, before the catalog has checked the names.
public struct CleanupRequest: Sendable {
    /// A column restricted to a value, with the flags that named them (for messages).
    public struct Restriction: Sendable {
        public let column: String
        public let value: String
        public let flag: String

        public init(column: String, value: String, flag: String) {
            self.column = column
            self.value = value
            self.flag = flag
        }
    }

    /// `--table`, schema-qualified or not.
    public let table: String
    public let tokenColumn: String
    public let registeredAtColumn: String?
    public let restrictions: [Restriction]
    /// `--mark`: the column to set instead of deleting.
    public let markColumn: String?

    public init(table: String, tokenColumn: String, registeredAtColumn: String?, restrictions: [Restriction],
                markColumn: String?) {
        self.table = table
        self.tokenColumn = tokenColumn
        self.registeredAtColumn = registeredAtColumn
        self.restrictions = restrictions
        self.markColumn = markColumn
    }

    /// `app.devices` → schema `app`, table `devices`; `devices` → no schema.
    public var tableName: TableName {
        guard let dot = table.firstIndex(of: ".") else { return TableName(schema: nil, name: table) }
        return TableName(schema: String(table[..<dot]), name: String(table[table.index(after: dot)...]))
    }

    /// The plan, every name checked against what `database` says of the table. Nothing is changed.
    public func plan(on database: any CleanupDatabase, system: DatabaseURL.System) throws(CleanupFailure) -> CleanupPlan {
        let name = tableName
        guard !name.name.isEmpty, name.schema?.isEmpty != true else {
            throw .usage("--table \(table): give a table name, or SCHEMA.TABLE")
        }
        let described: TableDescription?
        do { described = try database.describe(name) } catch {
            throw CleanupFailure("reading the catalog of \(database.product): \(error.description); nothing was changed", status: 2)
        }
        guard let description = described else {
            throw .usage("--table \(table): no such table in the database; check the name (and its schema)")
        }
        func column(_ name: String, _ flag: String) throws(CleanupFailure) -> ColumnDescription {
            guard let found = description.column(named: name) else {
                throw .usage("\(flag) \(name): no such column in table \(description.table) (its columns: "
                             + description.columns.map(\.name).joined(separator: ", ") + ")")
            }
            return found
        }
        let token = try column(tokenColumn, "--token-column")
        guard token.kind == .text else {
            throw .usage("--token-column \(tokenColumn): the column is \(token.type), not text; give the column holding the device tokens")
        }
        var registeredAt: ColumnDescription? = nil
        if let registeredAtColumn {
            let found = try column(registeredAtColumn, "--registered-at-column")
            guard system == .sqlite || found.kind == .timestamp else {
                throw .usage("--registered-at-column \(registeredAtColumn): the column is \(found.type), not a timestamp; "
                             + "give the column holding when the device registered its token")
            }
            registeredAt = found
        }
        var restrictions: [CleanupPlan.Restriction] = []
        for restriction in self.restrictions {
            let found = try column(restriction.column, restriction.flag)
            guard found.kind == .text else {
                throw .usage("\(restriction.flag) \(restriction.column): the column is \(found.type), not text")
            }
            restrictions.append(CleanupPlan.Restriction(column: found, value: restriction.value))
        }
        var action = CleanupPlan.Action.delete
        if let markColumn {
            let found = try column(markColumn, "--mark")
            guard found.kind == .timestamp || found.kind == .text else {
                throw .usage("--mark \(markColumn): the column is \(found.type); give a timestamp or text column to set")
            }
            guard found != token else { throw .usage("--mark \(markColumn): that is the token column; give another column") }
            action = .mark(found)
        }
        var keys: [ColumnDescription] = []
        for key in description.primaryKey { keys.append(try column(key, "primary key")) }
        return CleanupPlan(table: description, tokenColumn: token, registeredAtColumn: registeredAt,
                           restrictions: restrictions, action: action, keyColumns: keys.isEmpty ? [token] : keys)
    }
}
