import Cleanup
import Testing

extension MariaDBTests {
    /// Apple's rule on MariaDB's instants: a row registered before the token's `unregistered_at` goes,
    /// one registered at the same millisecond or later stays, a NULL registered-at counts as earlier.
    @Suite struct TimestampRule {
        static let unregisteredAt = "2025-12-22 16:46:28.279"

        /// Rows `id`, registered-at: 1 a millisecond earlier, 2 the same millisecond, 3 later, 4 NULL,
        /// and for microsecond columns 5 inside the same millisecond and 6 a microsecond before it.
        static let rows: [String: [(Int, String?)]] = [
            "DATETIME(3)": [(1, "2025-12-22 16:46:28.278"), (2, "2025-12-22 16:46:28.279"), (3, "2025-12-22 16:46:28.280"),
                            (4, nil)],
            "DATETIME(6)": [(1, "2025-12-22 16:46:28.278000"), (2, "2025-12-22 16:46:28.279000"), (3, "2025-12-22 16:46:28.280000"),
                            (4, nil), (5, "2025-12-22 16:46:28.279999"), (6, "2025-12-22 16:46:28.278999")],
            "TIMESTAMP(3)": [(1, "2025-12-22 16:46:28.278"), (2, "2025-12-22 16:46:28.279"), (3, "2025-12-22 16:46:28.280"),
                             (4, nil)],
            "TIMESTAMP(6)": [(1, "2025-12-22 16:46:28.278000"), (2, "2025-12-22 16:46:28.279000"), (3, "2025-12-22 16:46:28.280000"),
                             (4, nil), (5, "2025-12-22 16:46:28.279999"), (6, "2025-12-22 16:46:28.278999")],
        ]

        @Test(arguments: ["DATETIME(3)", "DATETIME(6)", "TIMESTAMP(3)", "TIMESTAMP(6)"])
        func earlierAndNullAreDeletedSameMillisecondAndLaterAreKept(type: String) throws {
            let fixture = try MariaDBFixture()
            let rows = try #require(Self.rows[type])
            try fixture.sql("""
                CREATE TABLE devices (id INT PRIMARY KEY, token VARCHAR(100) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
                                      registered_at \(type) NULL DEFAULT NULL, KEY (token));
                INSERT INTO devices VALUES \(rows.map { "(\($0.0), 'aa\($0.0)', \($0.1.map { "'\($0)'" } ?? "NULL"))" }.joined(separator: ", "));
                """)
            let database = try fixture.open()
            let plan = try fixture.plan(database)

            let result = try fixture.batch(database, plan, rows.map { deadToken("aa\($0.0)", at: Self.unregisteredAt) })

            let expected: [String: MatchedRow.Verdict] = ["1": .affected, "2": .kept, "3": .kept, "4": .affected,
                                                          "5": .kept, "6": .affected]
            #expect(result.matched.verdicts == expected.filter { key, _ in rows.contains { String($0.0) == key } })
            #expect(result.changed == result.matched.filter { $0.verdict == .affected }.count)
            #expect(try fixture.rows("SELECT id FROM devices ORDER BY id").map { $0[0] }
                == rows.map { String($0.0) }.filter { expected[$0] == .kept })
        }

        @Test func aTimestampIsComparedAsUTCWhateverTheServersZone() throws {
            // The suite's server runs at +05:00: read in that zone, the row registered an hour before
            // the token died would look four hours after it.
            let fixture = try MariaDBFixture()
            try fixture.sql("""
                CREATE TABLE devices (id INT PRIMARY KEY, token CHAR(4) NOT NULL, registered_at TIMESTAMP NULL DEFAULT NULL);
                INSERT INTO devices VALUES (1, 'aa01', '2025-12-22 17:46:28'), (2, 'aa02', '2025-12-22 15:46:28');
                """)
            let database = try fixture.open()

            let result = try fixture.batch(database, try fixture.plan(database),
                                           [deadToken("aa01", at: "2025-12-22 16:46:28.000"), deadToken("aa02", at: "2025-12-22 16:46:28.000")])

            #expect(result.matched.verdicts == ["1": .kept, "2": .affected])
            #expect(try fixture.rows("SELECT id FROM devices") == [["1"]])
        }

        @Test func aLineWithoutUnregisteredAtIsUnjudgedAndItsRowsGo() throws {
            let fixture = try MariaDBFixture()
            try fixture.sql("""
                CREATE TABLE devices (id INT PRIMARY KEY, token VARCHAR(100) NOT NULL, registered_at DATETIME(3) NULL);
                INSERT INTO devices VALUES (1, 'aa01', '2030-01-01 00:00:00'), (2, 'aa02', NULL), (3, 'aa03', '2020-01-01');
                """)
            let database = try fixture.open()

            let result = try fixture.batch(database, try fixture.plan(database),
                                           [deadToken("aa01", reason: "BadDeviceToken"), deadToken("aa02", reason: "ExpiredToken")])

            #expect(result.matched.verdicts == ["1": .unjudged, "2": .unjudged])
            #expect(result.changed == 2)
            #expect(try fixture.rows("SELECT id FROM devices") == [["3"]])
        }

        @Test func withoutARegisteredAtColumnEveryMatchedRowIsAffected() throws {
            let fixture = try MariaDBFixture()
            try fixture.sql("""
                CREATE TABLE devices (id INT PRIMARY KEY, token VARCHAR(100) NOT NULL, registered_at DATETIME(3) NULL);
                INSERT INTO devices VALUES (1, 'aa01', '2030-01-01 00:00:00'), (2, 'aa02', NULL);
                """)
            let database = try fixture.open()

            let result = try fixture.batch(database, try fixture.plan(database, registeredAt: nil),
                                           [deadToken("aa01", at: Self.unregisteredAt), deadToken("aa02")])

            #expect(result.matched.verdicts == ["1": .affected, "2": .unjudged])
            #expect(result.changed == 2)
        }

        @Test func aDryRunMatchesTheSameRowsAndChangesNothing() throws {
            let fixture = try MariaDBFixture()
            try fixture.sql("""
                CREATE TABLE devices (id INT PRIMARY KEY, token VARCHAR(100) NOT NULL, registered_at DATETIME(3) NULL);
                INSERT INTO devices VALUES (1, 'aa01', '2020-01-01'), (2, 'aa02', '2030-01-01');
                """)
            let before = try fixture.sql("CHECKSUM TABLE devices EXTENDED")
            let database = try fixture.open()
            let entries = [deadToken("aa01", at: Self.unregisteredAt), deadToken("aa02", at: Self.unregisteredAt)]

            let dry = try fixture.batch(database, try fixture.plan(database), entries, dryRun: true)

            #expect(try fixture.sql("CHECKSUM TABLE devices EXTENDED") == before)
            let real = try fixture.batch(database, try fixture.plan(database), entries)
            #expect(dry.matched.verdicts == real.matched.verdicts)
            #expect(real.changed == 1)
        }
    }
}
