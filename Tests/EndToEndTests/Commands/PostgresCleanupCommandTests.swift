import Foundation
import Testing
import TestSupport

/// `apns-bulk cleanup` through the built binary against a PostgreSQL server the suite starts on
/// 127.0.0.1, the password only in `PGPASSWORD`: the counts, a dry run, a rerun, and a kill -9 mid-run.
@Suite(.postgresServer) struct PostgresCleanupCommandTests {
    /// A device table of its own name: rows 1…40 hold the list's 40 tokens (every third registered
    /// again after the list's instant, so kept), rows 41…45 tokens the list does not name.
    final class Setup {
        let server: PostgresServer
        let directory: TemporaryDirectory
        let table = "devices_" + UUID().uuidString.prefix(8).lowercased()
        let list: String

        static func token(_ n: Int) -> String { String(format: "%064x", n) }

        init() throws {
            server = try #require(PostgresServerScope.current)
            directory = try TemporaryDirectory()
            try server.sql("""
                CREATE TABLE \(table) (id int PRIMARY KEY, token text NOT NULL, registered_at timestamp);
                INSERT INTO \(table) SELECT i, lpad(to_hex(i), 64, '0'),
                  CASE WHEN i % 3 = 0 THEN timestamp '2030-01-01' ELSE timestamp '2025-12-22 16:46:28.278' END
                  FROM generate_series(1, 45) AS i;
                CREATE INDEX ON \(table) (token);
                """)
            let lines = (1...40).map { "\(Self.token($0)),Unregistered,410,2025-12-22T16:46:28.279Z,\($0)" }
            list = try directory.write("dead-tokens.csv", (["device_token,reason,status,unregistered_at,row"] + lines)
                .joined(separator: "\n") + "\n")
        }

        var arguments: [String] {
            ["cleanup", "--dead-tokens", list, "--database", "postgresql://\(server.user)@127.0.0.1:\(server.port)/\(server.database)",
             "--table", table, "--token-column", "token", "--registered-at-column", "registered_at"]
        }

        func cleanup(_ extra: [String] = []) throws -> CommandResult {
            let result = try Binary.run(arguments + extra, environment: server.clientEnvironment)
            #expect(!result.stdout.contains(server.password) && !result.stderr.contains(server.password))
            return result
        }

        /// The table's rows, in order, as text: what "the same result" compares.
        func rows(of name: String? = nil) throws -> String {
            try server.sql("SELECT id, token, registered_at FROM \(name ?? table) ORDER BY id")
        }

        func ids() throws -> [Int] {
            try server.sql("SELECT id FROM \(table) ORDER BY id").split(separator: "\n").compactMap { Int($0) }
        }
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// Rows 1…40 but every third: the 27 rows registered before the list's instant.
    static let affectedIDs = (1...40).filter { $0 % 3 != 0 }

    @Test func aCleanRunDeletesByTheRuleAndCountsWhatItKept() throws {
        let setup = try Setup()
        let result = try setup.cleanup(["--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try Self.json(result.stdout)
        #expect(summary["matched"] as? Int == 40)
        #expect(summary["affected"] as? Int == 27)
        #expect(summary["kept_registered_after"] as? Int == 13)
        #expect(summary["not_found"] as? Int == 0)
        #expect(try setup.ids() == (1...45).filter { !Self.affectedIDs.contains($0) })
    }

    @Test func aDryRunChangesNothingAndCountsWhatARealRunDoes() throws {
        let setup = try Setup()
        let before = try setup.rows()
        let dry = try setup.cleanup(["--json", "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(try setup.rows() == before)
        let real = try setup.cleanup(["--json"])
        var dryCounts = try Self.json(dry.stdout), realCounts = try Self.json(real.stdout)
        #expect(dryCounts.removeValue(forKey: "dry_run") as? Bool == true)
        #expect(realCounts.removeValue(forKey: "dry_run") as? Bool == false)
        #expect(NSDictionary(dictionary: dryCounts) == NSDictionary(dictionary: realCounts))
    }

    @Test func aSecondRunAffectsNoRow() throws {
        let setup = try Setup()
        #expect(try setup.cleanup().status == 0)
        let after = try setup.rows()
        let second = try setup.cleanup(["--json"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try Self.json(second.stdout)["affected"] as? Int == 0)
        #expect(try setup.rows() == after)
    }

    @Test func aKillMidRunLeavesWholeBatchesAndARerunEndsAsOneCleanRunEnds() throws {
        let setup = try Setup()
        // The result of one clean run, on a copy of the table.
        try setup.server.sql("CREATE TABLE \(setup.table)_clean AS TABLE \(setup.table); CREATE INDEX ON \(setup.table)_clean (token)")
        let clean = try Binary.run(setup.arguments.map { $0 == setup.table ? setup.table + "_clean" : $0 },
                                   environment: setup.server.clientEnvironment)
        #expect(clean.status == 0, "\(clean.stderr)")

        // Row 23 (batch 5 of 8 at 5 tokens a batch) locked in a transaction of the test's own.
        let holder = Pipe()
        var holderEnvironment = setup.server.clientEnvironment
        holderEnvironment["PGAPPNAME"] = "lock-holder-" + setup.table
        let psql = try Command.start(setup.server.binaries + "/psql", setup.server.psqlArguments,
                                     environment: holderEnvironment, standardInput: holder)
        defer { psql.stop(signal: SIGKILL) }
        holder.fileHandleForWriting.write(Data("BEGIN;\nSELECT id FROM \(setup.table) WHERE id = 23 FOR UPDATE;\n".utf8))
        try waitUntil("the test holds row 23") {
            try setup.server.sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = '\(holderEnvironment["PGAPPNAME"] ?? "")' "
                                 + "AND state = 'idle in transaction'") == "1"
        }

        let stderr = setup.directory.path("first.stderr")
        let run = try Command.start(Binary.url.path, setup.arguments + ["--batch-size", "5"],
                                    environment: setup.server.clientEnvironment,
                                    standardError: Command.outputFile(stderr) as Any)
        defer { run.stop(signal: SIGKILL) }
        try waitUntil("cleanup waits for row 23's lock") {
            try setup.server.sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'apns-bulk' "
                                 + "AND wait_event_type = 'Lock' AND query LIKE '%\(setup.table)%'") == "1"
        }
        // Batches 1…4 (rows 1…20) are committed; batch 5 waits.
        let committed = (1...45).filter { $0 > 20 || $0 % 3 == 0 }
        #expect(try setup.ids() == committed, "\((try? String(contentsOfFile: stderr, encoding: .utf8)) ?? "")")
        kill(run.processIdentifier, SIGKILL)
        run.waitUntilExit()
        holder.fileHandleForWriting.write(Data("ROLLBACK;\n".utf8))
        try holder.fileHandleForWriting.close()
        psql.waitUntilExit()
        #expect(try setup.ids() == committed)

        let rerun = try setup.cleanup(["--batch-size", "5"])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(try setup.rows() == setup.rows(of: setup.table + "_clean"))
    }

    /// Polls `condition` every 20 ms for up to 30 s.
    func waitUntil(_ what: String, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if try condition() { return }
            usleep(20_000)
        }
        Issue.record("timed out waiting until \(what)")
        throw PostgresServer.Unavailable(description: "timed out waiting until \(what)")
    }
}

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
