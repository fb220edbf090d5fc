import Cleanup
import Testing

extension MariaDBTests {
    /// Which rows a dead token reaches: either case, each row once, in the named table, topic and
    /// environment only, and a hostile value only ever a value.
    @Suite struct TokenMatching {
        static let at = "2025-12-22 16:46:28.279"

        @Test func aCaseInsensitiveColumnMatchesEitherCaseEachRowOnceKeepingTheTablesCase() throws {
            let fixture = try MariaDBFixture()
            try fixture.sql("""
                CREATE TABLE devices (id INT PRIMARY KEY, token VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL,
                                      registered_at DATETIME(3) NULL, KEY (token));
                INSERT INTO devices VALUES (1, 'ABCDEF01', NULL), (2, 'abcdef02', NULL), (3, 'AbCdEf03', NULL), (4, 'abcdef04', NULL);
                """)
            let database = try fixture.open()
            let plan = try fixture.plan(database)
            #expect(plan.tokenColumn.caseInsensitive)

            // Both variants of each token, and the same token with a trailing space (equal under the
            // collation's PAD SPACE): still one match a row.
            let entries = ["abcdef01", "abcdef02", "abcdef03", "abcdef01 "].map { deadToken($0, at: Self.at) }
            let result = try fixture.batch(database, try fixture.plan(database, tokenIgnoresCase: false), entries)

            #expect(result.matched.map(\.tableToken).sorted() == ["ABCDEF01", "AbCdEf03", "abcdef02"])
            #expect(result.matched.first { $0.tableToken == "ABCDEF01" }?.listToken == "abcdef01")
            #expect(result.changed == 3)
            #expect(try fixture.rows("SELECT id FROM devices") == [["4"]])
        }

        @Test func aBinaryCollationColumnMatchesLowerAndUpperCaseRows() throws {
            let fixture = try MariaDBFixture()
            try fixture.sql("""
                CREATE TABLE devices (id INT PRIMARY KEY, token VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
                                      registered_at DATETIME(3) NULL, KEY (token));
                INSERT INTO devices VALUES (1, 'ABCDEF01', NULL), (2, 'abcdef02', NULL), (3, 'abcdef03', NULL);
                """)
            let database = try fixture.open()
            let plan = try fixture.plan(database)
            #expect(!plan.tokenColumn.caseInsensitive)

            let result = try fixture.batch(database, plan, [deadToken("abcdef01", at: Self.at), deadToken("abcdef02", at: Self.at)])

            #expect(result.matched.map(\.tableToken).sorted() == ["ABCDEF01", "abcdef02"])
            #expect(Set(result.matched.map(\.listToken)) == ["abcdef01", "abcdef02"])
            #expect(result.changed == 2)
            #expect(try fixture.rows("SELECT id FROM devices") == [["3"]])
        }

        @Test func aSchemaQualifiedTableIsTheOneCleanedNotTheURLsDatabasesNamesake() throws {
            let fixture = try MariaDBFixture()
            let other = try fixture.server.createDatabase()
            for schema in [fixture.database, other] {
                try fixture.sql("""
                    CREATE TABLE `\(schema)`.devices (id INT PRIMARY KEY, token VARCHAR(100) NOT NULL, registered_at DATETIME(3) NULL);
                    INSERT INTO `\(schema)`.devices VALUES (1, 'aa01', NULL), (2, 'aa02', NULL);
                    """)
            }
            let database = try fixture.open()
            let table = TableName(schema: other, name: "devices")
            let plan = try fixture.plan(database, table: table)
            #expect(plan.table.table == table)

            let result = try fixture.batch(database, plan, [deadToken("aa01", at: Self.at)])

            #expect(result.changed == 1)
            #expect(try fixture.rows("SELECT id FROM `\(other)`.devices") == [["2"]])
            #expect(try fixture.rows("SELECT id FROM devices ORDER BY id") == [["1"], ["2"]])
        }

        @Test func topicAndEnvironmentRestrictTheRowsTouched() throws {
            let fixture = try MariaDBFixture()
            try fixture.sql("""
                CREATE TABLE devices (id INT PRIMARY KEY, token VARCHAR(100) NOT NULL, topic VARCHAR(100) NOT NULL,
                                      environment VARCHAR(20) NULL, registered_at DATETIME(3) NULL);
                INSERT INTO devices VALUES (1, 'aa01', 'com.example.app', 'production', NULL),
                                           (2, 'aa01', 'com.example.other', 'production', NULL),
                                           (3, 'aa01', 'com.example.app', 'sandbox', NULL),
                                           (4, 'aa01', 'com.example.app', NULL, NULL);
                """)
            let database = try fixture.open()
            let plan = try fixture.plan(database, restrictions: [("topic", "com.example.app"), ("environment", "production")])

            let result = try fixture.batch(database, plan, [deadToken("aa01", at: Self.at)])

            #expect(result.matched.verdicts == ["1": .affected])
            #expect(result.changed == 1)
            #expect(try fixture.rows("SELECT id FROM devices ORDER BY id") == [["2"], ["3"], ["4"]])
        }

        @Test func hostileTokenValuesAreOnlyValues() throws {
            let fixture = try MariaDBFixture()
            let hostile = ["'; drop table devices; --", "\" or 1=1 --", "\\'; delete from devices; #", "` or true; --", "a\u{0}b"]
            try fixture.sql("""
                CREATE TABLE devices (id INT PRIMARY KEY, token VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
                                      registered_at DATETIME(3) NULL);
                INSERT INTO devices VALUES (1, 'aa01', NULL), (2, '\\'; drop table devices; --', NULL), (3, 'aa03', NULL);
                """)
            let database = try fixture.open()

            let result = try fixture.batch(database, try fixture.plan(database), hostile.map { deadToken($0, at: Self.at) })

            #expect(result.matched.map(\.tableToken) == ["'; drop table devices; --"])
            #expect(result.changed == 1)
            #expect(try fixture.rows("SELECT id FROM devices ORDER BY id") == [["1"], ["3"]])
        }

        @Test func aLongTokenIsMatchedAndReadWhole() throws {
            let fixture = try MariaDBFixture()
            let long = String(repeating: "0a", count: 350)
            try fixture.sql("""
                CREATE TABLE devices (id INT PRIMARY KEY, token VARCHAR(1000) NOT NULL, registered_at DATETIME(3) NULL);
                INSERT INTO devices VALUES (1, '\(long)', NULL), (2, '\(long.dropLast())', NULL);
                """)
            let database = try fixture.open()

            let result = try fixture.batch(database, try fixture.plan(database), [deadToken(long, at: Self.at)])

            #expect(result.matched.map(\.tableToken) == [long])
            #expect(result.matched.map(\.listToken) == [long])
            #expect(try fixture.rows("SELECT id FROM devices") == [["2"]])
        }

        @Test func aValueTheColumnsCharacterSetCannotHoldMatchesNothing() throws {
            // Stored into latin1 as it stands, "😀" would become "?" and match the row that is "?".
            let fixture = try MariaDBFixture()
            try fixture.sql("""
                CREATE TABLE devices (id INT PRIMARY KEY, token VARCHAR(200) CHARACTER SET latin1 NOT NULL, registered_at DATETIME(3) NULL);
                INSERT INTO devices VALUES (1, '?', NULL), (2, 'café', NULL);
                """)
            let database = try fixture.open()
            let long = String(repeating: "ab", count: 500)

            let result = try fixture.batch(database, try fixture.plan(database),
                                           ["😀", "café", long].map { deadToken($0, at: Self.at) })

            #expect(result.matched.map(\.tableToken) == ["café"])
            #expect(try fixture.rows("SELECT id FROM devices") == [["1"]])
        }

        @Test func markSetsOnlyWhereNullAndARerunChangesNothing() throws {
            let fixture = try MariaDBFixture()
            try fixture.sql("""
                CREATE TABLE devices (id INT PRIMARY KEY, token VARCHAR(100) NOT NULL, registered_at DATETIME(3) NULL,
                                      unregistered_at DATETIME(3) NULL);
                INSERT INTO devices VALUES (1, 'aa01', '2020-01-01', NULL), (2, 'aa02', '2020-01-01', '2024-01-01 00:00:00.000'),
                                           (3, 'aa03', NULL, NULL), (4, 'aa04', '2030-01-01', NULL);
                """)
            let database = try fixture.open()
            let plan = try fixture.plan(database, mark: "unregistered_at")
            let entries = [deadToken("aa01", at: Self.at), deadToken("aa02", at: Self.at), deadToken("aa03"),
                           deadToken("aa04", at: Self.at)]

            let first = try fixture.batch(database, plan, entries, runTime: unixMilliseconds("2026-01-02 03:04:05.006"))

            #expect(first.matched.verdicts == ["1": .affected, "2": .alreadyMarked, "3": .unjudged, "4": .kept])
            #expect(first.changed == 2)
            #expect(try fixture.rows("SELECT id, unregistered_at FROM devices ORDER BY id") == [
                ["1", Self.at], ["2", "2024-01-01 00:00:00.000"], ["3", "2026-01-02 03:04:05.006"], ["4", "NULL"],
            ])
            let again = try fixture.batch(database, plan, entries)
            #expect(again.changed == 0)
            #expect(again.matched.verdicts == ["1": .alreadyMarked, "2": .alreadyMarked, "3": .alreadyMarked, "4": .kept])
        }
    }
}
