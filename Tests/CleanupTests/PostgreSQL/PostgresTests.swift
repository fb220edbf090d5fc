import Cleanup
import Foundation
import TestSupport
import Testing

/// Every PostgreSQL suite runs inside this one, against one server it starts for them all; each
/// test makes tables of its own names, so the tests run in parallel.
@Suite(.postgresServer) enum PostgresTests {}

/// Starts a `PostgresServer` around the suite it is attached to and stops it afterwards.
struct PostgresServerScope: SuiteTrait, TestScoping {
    @TaskLocal static var current: PostgresServer?

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        try await Self.$current.withValue(server) { try await function() }
    }
}

extension Trait where Self == PostgresServerScope {
    static var postgresServer: Self { Self() }
}

/// What the tests of the PostgreSQL suites share: the server, a connection, a plan, one batch.
struct PostgresFixture {
    let server: PostgresServer
    /// A name no other test uses (`devices_1a2b3c4d`).
    let table: String

    init() throws {
        guard let server = PostgresServerScope.current else {
            throw PostgresServer.Unavailable(description: "no PostgreSQL server: run inside PostgresTests")
        }
        self.server = server
        table = "devices_" + UUID().uuidString.prefix(8).lowercased()
    }

    func url(password: String? = nil, port: Int? = nil, parameters: [(name: String, value: String)] = []) -> DatabaseURL {
        let port = port ?? server.port
        return DatabaseURL(system: .postgresql, user: server.user, password: password ?? server.password, host: "127.0.0.1",
                           port: port, database: server.database, parameters: parameters,
                           redacted: "postgresql://\(server.user):***@127.0.0.1:\(port)/\(server.database)")
    }

    func open() throws -> PostgresDatabase {
        try PostgresDatabase(url: url(), password: nil)
    }

    /// The plan `cleanup` would make of these names, through `describe`.
    func plan(_ database: PostgresDatabase, table: TableName? = nil, token: String = "token",
              registeredAt: String? = nil, restrictions: [(column: String, value: String)] = [],
              mark: String? = nil) throws -> CleanupPlan {
        let name = table ?? TableName(schema: nil, name: self.table)
        let description = try #require(try database.describe(name))
        let column = { (name: String) throws -> ColumnDescription in try #require(description.column(named: name)) }
        let keys = try description.primaryKey.isEmpty ? [column(token)] : description.primaryKey.map(column)
        return CleanupPlan(table: description, tokenColumn: try column(token),
                           registeredAtColumn: try registeredAt.map(column),
                           restrictions: try restrictions.map { .init(column: try column($0.column), value: $0.value) },
                           action: try mark.map { .mark(try column($0)) } ?? .delete, keyColumns: keys)
    }

    /// One batch as `cleanup` runs it: scratch filled, rows locked and judged, then changed.
    @discardableResult
    func runBatch(_ database: PostgresDatabase, _ plan: CleanupPlan, _ entries: [ScratchEntry],
                  runTime: Int64 = 1_800_000_000_000) throws -> (matches: [MatchedRow], changed: Int) {
        try database.prepareScratch(for: plan)
        try database.begin()
        try database.fillScratch(entries, for: plan)
        let matches = try database.matches(plan, lockingRows: true)
        let changed = try database.apply(plan, runTime: runTime)
        try database.commit()
        return (matches, changed)
    }

    /// The verdict of each matched row, by the table's token.
    func verdicts(_ matches: [MatchedRow]) -> [String: MatchedRow.Verdict] {
        Dictionary(matches.map { ($0.tableToken, $0.verdict) }, uniquingKeysWith: { first, _ in first })
    }
}

/// A 64-hex-digit token, distinct for each `n`.
func hexToken(_ n: Int, prefix: String = "ab") -> String {
    let digits = String(n, radix: 16)
    return prefix + String(repeating: "0", count: 62 - digits.count) + digits
}

/// 2025-12-22T16:46:28.279Z, an `unregistered_at` as APNs gives it (Unix milliseconds).
let unregisteredAt: Int64 = 1_766_421_988_279
