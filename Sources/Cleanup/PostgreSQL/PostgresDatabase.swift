// Placeholder while the PostgreSQL lane builds it: the type and initializer `cleanup` opens it by.
public final class PostgresDatabase: CleanupDatabase {
    public init(url: DatabaseURL, password: String?) throws(DatabaseError) {
        throw DatabaseError(.connection, "\(url.redacted): PostgreSQL is not supported yet")
    }

    public var product: String { "PostgreSQL" }
    public func describe(_ table: TableName) throws(DatabaseError) -> TableDescription? { nil }
    public func prepareScratch(for plan: CleanupPlan) throws(DatabaseError) {}
    public func begin() throws(DatabaseError) {}
    public func commit() throws(DatabaseError) {}
    public func rollback() throws(DatabaseError) {}
    public func fillScratch(_ entries: [ScratchEntry], for plan: CleanupPlan) throws(DatabaseError) {}
    public func matches(_ plan: CleanupPlan, lockingRows: Bool) throws(DatabaseError) -> [MatchedRow] { [] }
    public func apply(_ plan: CleanupPlan, runTime: Int64) throws(DatabaseError) -> Int { 0 }
}
