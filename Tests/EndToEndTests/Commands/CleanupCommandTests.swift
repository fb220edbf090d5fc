import Foundation
import Testing
import TestSupport

/// `apns-bulk cleanup` through the built binary against SQLite files made with the `sqlite3` tool:
/// what an operator sees on stdout, stderr and in the exit status.
@Suite struct CleanupCommandTests {
    final class Setup {
        let directory: TemporaryDirectory
        let database: String
        let list: String

        init(list text: String = Setup.list) throws {
            directory = try TemporaryDirectory()
            database = directory.path("app.db")
            try Command.succeeding("sqlite3", [database, """
                CREATE TABLE devices (id INTEGER PRIMARY KEY, token TEXT NOT NULL, registered_at TEXT, dead_at TEXT);
                INSERT INTO devices VALUES (1, 'AA01', '2025-12-01 10:00:00.000000', NULL), (2, 'aa02', '2026-01-01T00:00:00Z', NULL),
                                           (3, 'bb01', NULL, NULL), (4, 'cc01', NULL, NULL);
                """])
            list = try directory.write("dead-tokens.csv", text)
        }

        static let list = """
            device_token,reason,status,unregistered_at,row
            aa01,Unregistered,410,2025-12-22T16:46:28.279Z,1
            aa02,Unregistered,410,2025-12-22T16:46:28.279Z,2
            bb01,BadDeviceToken,400,,3
            cc01,ExpiredToken,410,2025-12-22T16:46:28.279Z,4
            dd01,Unregistered,410,2025-12-22T16:46:28.279Z,5
            "'; DROP TABLE devices; --",Unregistered,410,,6

            """

        func cleanup(_ extra: [String], environment: [String: String]? = nil) throws -> CommandResult {
            try Binary.run(["cleanup", "--dead-tokens", list, "--database", "sqlite:" + database, "--table", "devices",
                            "--token-column", "token"] + extra, environment: environment)
        }

        func ids() throws -> String {
            try Command.succeeding("sqlite3", [database, "SELECT group_concat(id) FROM (SELECT id FROM devices ORDER BY id)"]).stdout
        }
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func defaultReasonsDeleteByTheRuleAndLeaveBadDeviceTokenRows() throws {
        let setup = try Setup()
        let result = try setup.cleanup(["--registered-at-column", "registered_at", "--json", "--audit-out", setup.directory.path("audit.csv")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try setup.ids() == "2,3\n")
        let summary = try Self.json(result.stdout)
        #expect(Set(summary.keys) == ["matched", "affected", "kept_registered_after", "not_found", "by_reason", "dry_run",
                                      "unjudged", "already_marked", "unreadable_registered_at", "rule_applied", "action",
                                      "batches", "tokens"])
        #expect(summary["matched"] as? Int == 3)
        #expect(summary["affected"] as? Int == 2)
        #expect(summary["kept_registered_after"] as? Int == 1)
        #expect(summary["not_found"] as? Int == 2)
        #expect(summary["by_reason"] as? [String: Int] == ["Unregistered": 1, "ExpiredToken": 1])
        #expect(summary["dry_run"] as? Bool == false)
        #expect(result.stdout.split(separator: "\n").count == 1)
        let audit = try String(decoding: setup.directory.read("audit.csv"), as: UTF8.self)
        #expect(audit == """
            id,device_token,reason,unregistered_at,action
            1,AA01,Unregistered,2025-12-22T16:46:28.279Z,delete
            4,cc01,ExpiredToken,2025-12-22T16:46:28.279Z,delete

            """)
    }

    @Test func namedReasonsReachBadDeviceTokenRows() throws {
        let setup = try Setup()
        let result = try setup.cleanup(["--reasons", "BadDeviceToken", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try setup.ids() == "1,2,4\n")
        #expect(try Self.json(result.stdout)["rule_applied"] as? Bool == false)
    }

    @Test func aDryRunPrintsTheSameCountsAndChangesNoByte() throws {
        let setup = try Setup()
        let before = try setup.directory.read("app.db")
        let dry = try setup.cleanup(["--registered-at-column", "registered_at", "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(try setup.directory.read("app.db") == before)
        #expect(dry.stdout.contains("2 would be deleted"))
        #expect(dry.stdout.contains("dry run, nothing changed"))
        let real = try setup.cleanup(["--registered-at-column", "registered_at"])
        #expect(real.stdout.hasPrefix(dry.stdout.components(separatedBy: ", 2 would be deleted")[0] + ", 2 deleted"))
    }

    @Test func maxAffectedRefusesWithTheCountAndChangesNothing() throws {
        let setup = try Setup()
        let result = try setup.cleanup(["--max-affected", "1"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("apns-bulk: --max-affected 1: 3 rows would be affected; nothing was changed"))
        #expect(try setup.ids() == "1,2,3,4\n")
    }

    @Test func aMissingSQLiteFileIsOneLineAndIsNotCreated() throws {
        let setup = try Setup()
        let missing = setup.directory.path("missing.db")
        let result = try Binary.run(["cleanup", "--dead-tokens", setup.list, "--database", "sqlite:" + missing,
                                     "--table", "devices", "--token-column", "token"])
        #expect(result.status == 1)
        #expect(result.stderr.hasSuffix("apns-bulk: --database sqlite:\(missing): no such file; give the path of the app's "
                                        + "SQLite database (cleanup never creates one); nothing was changed\n"))
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test func aListWithoutAColumnIsRefusedNamingIt() throws {
        let setup = try Setup(list: "device_token,reason,status,row\naa01,Unregistered,410,1\n")
        let result = try setup.cleanup([])
        #expect(result.status == 1)
        #expect(Self.lastLine(result.stderr).hasPrefix("apns-bulk: --dead-tokens \(setup.list): no unregistered_at column"))
        #expect(try setup.ids() == "1,2,3,4\n")
    }

    @Test(arguments: [
        (["--table", "devicez"], "apns-bulk: --table devicez: no such table in the database; check the name (and its schema)"),
        (["--registered-at-column", "created_at"], "apns-bulk: --registered-at-column created_at: no such column in table devices "
            + "(its columns: id, token, registered_at, dead_at)"),
        (["--database", "sqlite://db.internal/app.db"], "apns-bulk: --database sqlite://db.internal/app.db: sqlite:// takes no host"),
        (["--reasons", "Unregisterd"], "apns-bulk: --reasons Unregisterd: not a reason a dead-token list holds"),
        (["--topic", "com.example.app"], "apns-bulk: --topic needs --topic-column"),
    ])
    func aBadFlagIsOneLineWithStatusOne(extra: [String], message: String) throws {
        let setup = try Setup()
        let result = try setup.cleanup(extra)
        #expect(result.status == 1)
        #expect(Self.lastLine(result.stderr).hasPrefix(message), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(try setup.ids() == "1,2,3,4\n")
    }

    @Test func thePasswordAppearsInNoOutput() throws {
        let setup = try Setup()
        let file = try setup.directory.write("password", "s3cret-file\n")
        let runs = [
            try setup.cleanup(["--database", "postgresql://app:s3cret-url@127.0.0.1:99999/app"]),
            try setup.cleanup(["--database", "postgresql://app:s3cret-url@127.0.0.1:1/app", "--json"]),
            try setup.cleanup(["--database", "mysql://app@127.0.0.1:1/app", "--password-file", file]),
            try setup.cleanup(["--password-env", "DB_PW", "--json"], environment: ["DB_PW": "s3cret-env"]),
        ]
        for result in runs {
            for secret in ["s3cret-url", "s3cret-file", "s3cret-env"] {
                #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret), "\(result.stderr)")
            }
        }
        #expect(runs[0].stderr.contains("postgresql://app:***@127.0.0.1:99999/app"))
        #expect(runs[3].status == 0)
    }

    static func lastLine(_ text: String) -> String {
        text.split(separator: "\n").last.map(String.init) ?? ""
    }
}
