import Foundation
import Testing
import TestSupport

/// `apns-bulk cleanup` through the built binary against a MariaDB server the suite starts on
/// 127.0.0.1: the counts an operator sees, a dry run that changes nothing, a rerun that affects
/// nothing, and a password that never needs the command line.
@Suite(MariaDBServerScope()) struct MariaDBCleanupCommandTests {
    /// One test's database on the suite's server, with the app's device table and a dead-token list.
    final class Setup {
        let server: MariaDBServer
        let database: String
        let directory: TemporaryDirectory
        let list: String

        /// 1 registered before its token died, 2 (the table's upper case) after, 3 at an unknown time,
        /// 4 a BadDeviceToken row left by default, 5 of another app, 6 in no list.
        static let table = """
            CREATE TABLE devices (id INT PRIMARY KEY, token VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
                                  topic VARCHAR(100) NOT NULL, registered_at DATETIME(6) NULL, dead_at DATETIME(3) NULL,
                                  KEY (token));
            INSERT INTO devices VALUES (1, 'aa01', 'com.example.app', '2025-12-22 16:46:28.278999', NULL),
                                       (2, 'AA02', 'com.example.app', '2025-12-22 16:46:28.279000', NULL),
                                       (3, 'aa03', 'com.example.app', NULL, NULL),
                                       (4, 'bb01', 'com.example.app', NULL, NULL),
                                       (5, 'aa01', 'com.example.other', NULL, NULL),
                                       (6, 'cc01', 'com.example.app', NULL, NULL);
            """

        static let list = """
            device_token,reason,status,unregistered_at,row
            aa01,Unregistered,410,2025-12-22T16:46:28.279Z,1
            aa02,Unregistered,410,2025-12-22T16:46:28.279Z,2
            AA03,ExpiredToken,410,2025-12-22T16:46:28.279Z,3
            bb01,BadDeviceToken,400,,4
            dd01,Unregistered,410,2025-12-22T16:46:28.279Z,5
            "'; DROP TABLE devices; --",Unregistered,410,,6

            """

        /// A database of its own on the suite's server holding `table`, and `list` in a file.
        init(table: String = Setup.table, list text: String = Setup.list) throws {
            server = try #require(MariaDBServer.current, "the suite's MariaDB server")
            database = try server.createDatabase()
            directory = try TemporaryDirectory()
            try server.rootSQL(table, database: database)
            list = try directory.write("dead-tokens.csv", text)
        }

        @discardableResult
        func sql(_ statements: String) throws -> String { try server.rootSQL(statements, database: database) }

        func ids() throws -> String { try sql("SELECT GROUP_CONCAT(id ORDER BY id) FROM devices") }

        /// Every row and a checksum of the table, to compare byte for byte.
        func contents() throws -> String {
            try sql("SELECT * FROM devices ORDER BY id; CHECKSUM TABLE devices EXTENDED")
        }

        /// Runs `cleanup` on this database, the password in the URL unless `url` says otherwise.
        func cleanup(_ extra: [String], url: String? = nil, environment: [String: String]? = nil) throws -> CommandResult {
            try Binary.run(["cleanup", "--dead-tokens", list, "--database", url ?? server.url(database: database),
                            "--table", "devices", "--token-column", "token", "--registered-at-column", "registered_at",
                            "--topic-column", "topic", "--topic", "com.example.app"] + extra,
                           environment: environment.map { ProcessInfo.processInfo.environment.merging($0) { _, given in given } })
        }
    }

    static func json(_ result: CommandResult) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stderr)")
    }

    @Test func aCleanRunDeletesByTheRuleCountsAndAuditsInBatches() throws {
        let setup = try Setup()
        let audit = setup.directory.path("audit.csv")

        let result = try setup.cleanup(["--json", "--batch-size", "2", "--audit-out", audit])

        #expect(result.status == 0, "\(result.stderr)")
        let summary = try Self.json(result)
        #expect(summary["matched"] as? Int == 3)
        #expect(summary["affected"] as? Int == 2)
        #expect(summary["kept_registered_after"] as? Int == 1)
        #expect(summary["not_found"] as? Int == 2)
        #expect(summary["by_reason"] as? [String: Int] == ["Unregistered": 1, "ExpiredToken": 1])
        #expect(summary["dry_run"] as? Bool == false)
        #expect(summary["batches"] as? Int == 3)
        #expect(try setup.ids() == "2,4,5,6\n")
        #expect(try String(decoding: setup.directory.read("audit.csv"), as: UTF8.self) == """
            id,device_token,reason,unregistered_at,action
            1,aa01,Unregistered,2025-12-22T16:46:28.279Z,delete
            3,aa03,ExpiredToken,2025-12-22T16:46:28.279Z,delete

            """)
        for output in [result.stdout, result.stderr, try String(decoding: setup.directory.read("audit.csv"), as: UTF8.self)] {
            #expect(!output.contains(setup.server.password))
        }
    }

    @Test func aDryRunChangesNothingAndCountsWhatARealRunDoes() throws {
        let setup = try Setup()
        let before = try setup.contents()

        let dry = try setup.cleanup(["--json", "--dry-run"])

        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(try setup.contents() == before)
        let real = try setup.cleanup(["--json"])
        var dryCounts = try Self.json(dry)
        var realCounts = try Self.json(real)
        #expect(dryCounts.removeValue(forKey: "dry_run") as? Bool == true)
        #expect(realCounts.removeValue(forKey: "dry_run") as? Bool == false)
        #expect(NSDictionary(dictionary: dryCounts) == NSDictionary(dictionary: realCounts))
    }

    @Test(arguments: [[], ["--mark", "dead_at"]])
    func aSecondRunAffectsNoRow(action: [String]) throws {
        let setup = try Setup()

        let first = try setup.cleanup(["--json"] + action)
        let afterFirst = try setup.contents()
        let second = try setup.cleanup(["--json"] + action)

        #expect(first.status == 0 && second.status == 0, "\(first.stderr) \(second.stderr)")
        #expect(try Self.json(first)["affected"] as? Int == 2)
        #expect(try Self.json(second)["affected"] as? Int == 0)
        #expect(try setup.contents() == afterFirst)
    }

    @Test func thePasswordComesFromAnEnvironmentVariableOrAFileNeverTheCommandLine() throws {
        let setup = try Setup()
        let url = setup.server.urlWithoutPassword(database: setup.database)
        let file = try setup.directory.write("db-password", setup.server.password + "\n")

        let fromVariable = try setup.cleanup(["--json", "--dry-run", "--password-env", "APP_DB_PASSWORD"], url: url,
                                             environment: ["APP_DB_PASSWORD": setup.server.password])
        let fromFile = try setup.cleanup(["--json", "--dry-run", "--password-file", file], url: url)
        let fromMySQLVariable = try setup.cleanup(["--json", "--dry-run"], url: url, environment: ["MYSQL_PWD": setup.server.password])

        for result in [fromVariable, fromFile, fromMySQLVariable] {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(try Self.json(result)["affected"] as? Int == 2)
            #expect(!(result.stdout + result.stderr).contains(setup.server.password))
        }
    }

    @Test func aWrongPasswordIsOneLineThatNamesTheURLNotThePassword() throws {
        let setup = try Setup()
        let wrong = "wrong-Password-0815"
        let file = try setup.directory.write("db-password", wrong + "\n")
        let before = try setup.contents()

        let result = try setup.cleanup(["--password-file", file], url: setup.server.urlWithoutPassword(database: setup.database))

        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        // The error is the last line; a progress line may come before it.
        let error = try #require(result.stderr.split(separator: "\n").last.map(String.init))
        #expect(error.contains(setup.server.urlWithoutPassword(database: setup.database)) && error.contains("Access denied"),
                "\(result.stderr)")
        #expect(!result.stderr.contains(wrong))
        #expect(try setup.contents() == before)
    }
}

/// Starts a MariaDB server around a suite and kills it afterwards.
struct MariaDBServerScope: SuiteTrait, TestScoping {
    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        try await MariaDBServer.serving(function)
    }
}
