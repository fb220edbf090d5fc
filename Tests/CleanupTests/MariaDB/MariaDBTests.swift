@testable import Cleanup
import Foundation
import TestSupport
import Testing

/// Every MariaDB test, in suites nested here so that they share one server, started once for them
/// all and killed when the last has run. Each test works in a database of its own.
@Suite(MariaDBServerScope()) struct MariaDBTests {}

/// Starts a MariaDB server around a suite (its nested suites included) and kills it afterwards.
struct MariaDBServerScope: SuiteTrait, TestScoping {
    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        try await MariaDBServer.serving(function)
    }
}

/// One test's database on the suite's server, the table it makes there, and the cleanup's steps
/// driven as the run drives them.
struct MariaDBFixture {
    let server: MariaDBServer
    let database: String

    init() throws {
        server = try #require(MariaDBServer.current, "the suite's MariaDB server")
        database = try server.createDatabase()
    }

    /// SQL as root in this test's database, through the `mariadb` client; TIMESTAMP values in UTC.
    @discardableResult
    func sql(_ statements: String) throws -> String {
        try server.rootSQL("SET time_zone = '+00:00';\n" + statements, database: database)
    }

    /// The rows a query answers, each a list of its tab-separated columns.
    func rows(_ query: String) throws -> [[String]] {
        try sql(query).split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }

    func url(password: String? = nil, port: Int? = nil) -> DatabaseURL {
        let port = port ?? server.port
        return DatabaseURL(system: .mysql, user: server.user, password: password, host: "127.0.0.1", port: port,
                           database: database, parameters: [],
                           redacted: "mysql://\(server.user)\(password == nil ? "" : ":***")@127.0.0.1:\(port)/\(database)")
    }

    func open() throws -> MariaDBDatabase { try MariaDBDatabase(url: url(), password: server.password) }

    /// A plan over `table` as the catalog describes it.
    func plan(_ database: MariaDBDatabase, table: TableName = TableName(schema: nil, name: "devices"),
              token: String = "token", registeredAt: String? = "registered_at", restrictions: [(String, String)] = [],
              mark: String? = nil, tokenIgnoresCase: Bool? = nil) throws -> CleanupPlan {
        let description = try #require(try database.describe(table))
        func column(_ name: String) throws -> ColumnDescription { try #require(description.column(named: name)) }
        var tokenColumn = try column(token)
        if let tokenIgnoresCase {
            tokenColumn = ColumnDescription(name: tokenColumn.name, type: tokenColumn.type, kind: tokenColumn.kind,
                                            caseInsensitive: tokenIgnoresCase)
        }
        let keys = try description.primaryKey.map(column)
        return CleanupPlan(table: description, tokenColumn: tokenColumn, registeredAtColumn: try registeredAt.map(column),
                           restrictions: try restrictions.map { CleanupPlan.Restriction(column: try column($0.0), value: $0.1) },
                           action: try mark.map { CleanupPlan.Action.mark(try column($0)) } ?? .delete,
                           keyColumns: keys.isEmpty ? [tokenColumn] : keys)
    }

    /// One batch as the run does it: the scratch filled, the rows matched (locked unless a dry run),
    /// applied, committed (rolled back in a dry run).
    func batch(_ database: MariaDBDatabase, _ plan: CleanupPlan, _ entries: [ScratchEntry], dryRun: Bool = false,
               runTime: Int64 = 1_800_000_000_000) throws -> (matched: [MatchedRow], changed: Int) {
        try database.prepareScratch(for: plan)
        try database.begin()
        try database.fillScratch(entries, for: plan)
        let matched = try database.matches(plan, lockingRows: !dryRun)
        if dryRun {
            try database.rollback()
            return (matched, 0)
        }
        let changed = try database.apply(plan, runTime: runTime)
        try database.commit()
        return (matched, changed)
    }
}

extension [MatchedRow] {
    /// Each matched row's first key and its verdict, sorted by key.
    var verdicts: [String: MatchedRow.Verdict] {
        Dictionary(map { ($0.keys.first.flatMap { $0 } ?? "", $0.verdict) }, uniquingKeysWith: { first, _ in first })
    }
}

/// A dead token's line, `unregistered_at` given as UTC text (`2025-12-22 16:46:28.279`).
func deadToken(_ token: String, at instant: String? = nil, reason: String = "Unregistered") -> ScratchEntry {
    ScratchEntry(token: token, reason: reason, unregisteredAt: instant.map(unixMilliseconds))
}

/// `2025-12-22 16:46:28.279` (UTC) in Unix milliseconds.
func unixMilliseconds(_ text: String) -> Int64 {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSS"
    guard let date = formatter.date(from: text) else { preconditionFailure("not an instant: \(text)") }
    return Int64((date.timeIntervalSince1970 * 1000).rounded())
}
