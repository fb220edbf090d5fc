@testable import Cleanup
import TestSupport
import Testing

extension MariaDBTests {
    /// What `describe` reads from information_schema, and that the join the cleanup runs is served by
    /// the table's index on the token column.
    @Suite struct Catalog {
        @Test func describeGivesKindsCaseAndThePrimaryKeyInKeyOrder() throws {
            let fixture = try MariaDBFixture()
            try fixture.sql("""
                CREATE TABLE devices (app VARCHAR(50) NOT NULL, token CHAR(64) CHARACTER SET ascii COLLATE ascii_general_ci NOT NULL,
                                      raw_token VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL, note TEXT,
                                      registered_at DATETIME(6) NULL, seen TIMESTAMP NULL DEFAULT NULL, hits INT,
                                      PRIMARY KEY (token, app));
                """)
            let database = try fixture.open()

            let description = try #require(try database.describe(TableName(schema: nil, name: "devices")))

            #expect(description.table == TableName(schema: nil, name: "devices"))
            #expect(description.primaryKey == ["token", "app"])
            #expect(description.columns.map(\.name) == ["app", "token", "raw_token", "note", "registered_at", "seen", "hits"])
            #expect(description.columns.map(\.kind) == [.text, .text, .text, .text, .timestamp, .timestamp, .other])
            #expect(description.column(named: "token")?.caseInsensitive == true)
            #expect(description.column(named: "raw_token")?.caseInsensitive == false)
            #expect(description.column(named: "registered_at")?.type == "datetime(6)")
        }

        @Test func anUnknownTableOrSchemaIsNil() throws {
            let fixture = try MariaDBFixture()
            try fixture.sql("CREATE TABLE devices (token VARCHAR(64) NOT NULL)")
            let database = try fixture.open()

            #expect(try database.describe(TableName(schema: nil, name: "device")) == nil)
            #expect(try database.describe(TableName(schema: nil, name: "Devices")) == nil)
            #expect(try database.describe(TableName(schema: "no_such_schema", name: "devices")) == nil)
            #expect(try database.describe(TableName(schema: fixture.database, name: "devices"))?.table
                == TableName(schema: fixture.database, name: "devices"))
        }

        @Test func oddIdentifiersAreQuotedNotSpliced() throws {
            let fixture = try MariaDBFixture()
            try fixture.sql("""
                CREATE TABLE `dev``ices; --` (`id key` INT PRIMARY KEY, `tok``en` VARCHAR(100) NOT NULL, `registered at` DATETIME(3) NULL);
                INSERT INTO `dev``ices; --` VALUES (1, 'aa01', NULL), (2, 'aa02', NULL);
                """)
            let database = try fixture.open()
            let plan = try fixture.plan(database, table: TableName(schema: nil, name: "dev`ices; --"), token: "tok`en",
                                        registeredAt: "registered at")

            let result = try fixture.batch(database, plan, [deadToken("aa01", at: "2025-12-22 16:46:28.279")])

            #expect(result.matched.verdicts == ["1": .affected])
            #expect(try fixture.rows("SELECT `id key` FROM `dev``ices; --`") == [["2"]])
        }

        @Test func theTablesTokenIndexServesTheJoinOf200000Rows() throws {
            let fixture = try MariaDBFixture()
            try fixture.sql("""
                CREATE TABLE devices (id INT PRIMARY KEY, token VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL,
                                      topic VARCHAR(100) NOT NULL, registered_at DATETIME(3) NULL, KEY token_index (token));
                INSERT INTO devices SELECT seq, LPAD(HEX(seq), 64, '0'), 'com.example.app', NULL FROM seq_1_to_200000;
                ANALYZE TABLE devices;
                """)
            let database = try fixture.open()
            let plan = try fixture.plan(database, restrictions: [("topic", "com.example.app")])
            try database.prepareScratch(for: plan)
            try database.fillScratch((1...500).map { deadToken(String(repeating: "0", count: 60) + String($0, radix: 16)) }, for: plan)

            for (sql, parameters) in [database.matchesStatement(plan, lockingRows: true),
                                      database.applyStatement(plan, runTime: 0)] {
                #expect(!sql.lowercased().contains("lower("))
                let plan = try database.connection.query("EXPLAIN " + sql, parameters).rows
                let table = try #require(plan.first { $0[2] == "t" }, "\(plan)")
                #expect(table[5] == "token_index", "\(plan)")
                #expect(["ref", "eq_ref"].contains(table[3]), "\(plan)")
            }
        }
    }

    /// InnoDB locks every row a locking read examines: were the join to scan the table, a batch
    /// would wait on a row the app holds that no list token names. The optimizer scans a table its
    /// statistics call empty, as they are until InnoDB's background recount (late on a busy
    /// machine; never here, `STATS_AUTO_RECALC = 0`). The join is forced onto the token index.
    @Suite struct Locking {
        @Test func aBatchLocksOnlyItsOwnRowsEvenInASmallTable() throws {
            let fixture = try MariaDBFixture()
            let values = (1...40).map { "(\($0), '\(String(format: "%064x", $0))')" }.joined(separator: ", ")
            try fixture.sql("""
                CREATE TABLE devices (id INT PRIMARY KEY, token VARCHAR(100) NOT NULL, KEY token_index (token))
                    STATS_PERSISTENT = 1 STATS_AUTO_RECALC = 0;
                INSERT INTO devices VALUES \(values);
                """)
            let held = try fixture.server.holdSession("BEGIN; SELECT id FROM devices WHERE id = 40 FOR UPDATE;",
                                                      database: fixture.database)
            defer { held.release() }
            let database = try fixture.open()
            try database.connection.execute("SET SESSION innodb_lock_wait_timeout = 3")
            let plan = try fixture.plan(database, registeredAt: nil)
            try database.prepareScratch(for: plan)
            try database.fillScratch((1...5).map { deadToken(String(format: "%064x", $0)) }, for: plan)
            for (sql, parameters) in [database.matchesStatement(plan, lockingRows: true), database.applyStatement(plan, runTime: 0)] {
                let explained = try database.connection.query("EXPLAIN " + sql, parameters).rows
                let table = try #require(explained.first { $0[2] == "t" }, "\(explained)")
                #expect(table[5] == "token_index", "\(explained)")
            }
            let (matched, changed) = try fixture.batch(database, plan, (1...5).map { deadToken(String(format: "%064x", $0)) })
            #expect(matched.count == 5 && changed == 5)
        }

        /// A lock wait that times out while the batch's rows stream back is an error packet met by a
        /// row fetch, whose reason the client library keeps on the connection: it is still named.
        @Test func aLockWaitTimeoutIsNamed() throws {
            let fixture = try MariaDBFixture()
            let values = (1...5).map { "(\($0), '\(String(format: "%064x", $0))')" }.joined(separator: ", ")
            try fixture.sql("""
                CREATE TABLE devices (id INT PRIMARY KEY, token VARCHAR(100) NOT NULL, KEY (token));
                INSERT INTO devices VALUES \(values);
                """)
            let held = try fixture.server.holdSession("BEGIN; SELECT id FROM devices WHERE id = 3 FOR UPDATE;",
                                                      database: fixture.database)
            defer { held.release() }
            let database = try fixture.open()
            try database.connection.execute("SET SESSION innodb_lock_wait_timeout = 1")
            let plan = try fixture.plan(database, registeredAt: nil)

            let error = #expect(throws: DatabaseError.self) {
                try fixture.batch(database, plan, (1...5).map { deadToken(String(format: "%064x", $0)) })
            }

            #expect(error?.description.contains("Lock wait timeout exceeded") == true, "\(String(describing: error))")
        }
    }

    /// A connection that cannot be made says so in one line, naming the URL without its password.
    @Suite struct Connection {
        @Test func aWrongPasswordIsOneLineWithoutThePassword() throws {
            let fixture = try MariaDBFixture()
            let wrong = "not-the-Secret-4711"

            let error = #expect(throws: DatabaseError.self) {
                try MariaDBDatabase(url: fixture.url(password: wrong), password: wrong)
            }

            let message = try #require(error).description
            #expect(error?.kind == .connection)
            #expect(message.hasPrefix("mysql://cleanup:***@127.0.0.1:\(fixture.server.port)/\(fixture.database): "))
            #expect(message.contains("Access denied"))
            #expect(!message.contains(wrong) && !message.contains("\n"))
        }

        @Test func anUnreachableServerIsOneLine() throws {
            let fixture = try MariaDBFixture()
            let port = try LoopbackPort.free()

            let error = #expect(throws: DatabaseError.self) {
                try MariaDBDatabase(url: fixture.url(password: "pw-unreachable", port: port), password: "pw-unreachable")
            }

            let message = try #require(error).description
            #expect(error?.kind == .connection)
            #expect(message.contains("127.0.0.1:\(port)") && message.contains("Can't connect"))
            #expect(!message.contains("pw-unreachable") && !message.contains("\n"))
        }

        @Test func theProductNamesTheServer() throws {
            let database = try MariaDBFixture().open()
            #expect(database.product.hasPrefix("MariaDB 10."))
        }
    }
}
