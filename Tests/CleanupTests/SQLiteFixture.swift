import Cleanup
import Foundation
import TestSupport

/// A SQLite device table in a temporary file, made and read back with the `sqlite3` tool (an
/// implementation that shares no code with ours), and a cleanup run against it.
final class SQLiteFixture {
    let directory: TemporaryDirectory
    let path: String
    var url: DatabaseURL { get throws { try DatabaseURL.parse("sqlite:" + path) } }

    /// APNs' `unregistered_at` of most lines: 2025-12-22T16:46:28.279Z.
    static let unregisteredAt: Int64 = 1_766_421_988_279

    /// A `devices` table (id, token, registered_at, topic, environment, dead_at) with an index on
    /// the token, then `sql` (inserts) run on it.
    init(schema: String = SQLiteFixture.devices, _ sql: String) throws {
        directory = try TemporaryDirectory()
        path = directory.path("app.db")
        try sqlite(schema + sql)
    }

    static let devices = """
        CREATE TABLE devices (id INTEGER PRIMARY KEY, token TEXT NOT NULL, registered_at TEXT, topic TEXT,
                              environment TEXT, dead_at TEXT);
        CREATE INDEX devices_token ON devices (token);
        """

    @discardableResult
    func sqlite(_ sql: String) throws -> String {
        try Command.succeeding("sqlite3", [path, sql]).stdout
    }

    /// The ids left in `devices`, in order.
    func ids(_ table: String = "devices") throws -> [Int] {
        try sqlite("SELECT id FROM \(table) ORDER BY id").split(separator: "\n").compactMap { Int($0) }
    }

    func database() throws -> SQLiteDatabase { try SQLiteDatabase(url: url, password: nil) }

    /// Plans and runs a cleanup of `entries` against `table`; the audit's rows are returned with the counts.
    func cleanup(_ entries: [ScratchEntry], table: String = "devices", tokenColumn: String = "token",
                 registeredAt: String? = "registered_at", restrictions: [CleanupRequest.Restriction] = [],
                 mark: String? = nil, options: CleanupRun.Options = .init()) throws -> (counts: CleanupCounts, audit: [AuditedRow]) {
        let database = try database()
        let request = CleanupRequest(table: table, tokenColumn: tokenColumn, registeredAtColumn: registeredAt,
                                     restrictions: restrictions, markColumn: mark)
        let plan = try request.plan(on: database, system: .sqlite)
        var audit: [AuditedRow] = []
        let counts = try CleanupRun(database: database, plan: plan, entries: entries, options: options,
                                    runTime: 1_800_000_000_000).run(audit: { audit += $0 })
        return (counts, audit)
    }
}

/// A list line of the default reason with the fixture's `unregistered_at`.
func dead(_ token: String, _ reason: String = "Unregistered", at: Int64? = SQLiteFixture.unregisteredAt) -> ScratchEntry {
    ScratchEntry(token: token, reason: reason, unregisteredAt: at)
}
