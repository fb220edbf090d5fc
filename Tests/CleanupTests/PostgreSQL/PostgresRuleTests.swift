import Cleanup
import Testing

extension PostgresTests {
    /// Apple's rule on the app's table: a row registered again at or after the token's
    /// `unregistered_at` is kept; instants compared as instants, to the millisecond.
    @Suite struct RuleTests {
        /// One row a case: earlier by 1 ms and by 1 µs, equal, later by 1 µs and 1 ms, NULL, and a
        /// token whose list line has no time. Returns the verdicts and the tokens left in the table.
        func judge(columnType: String) throws -> (verdicts: [String: MatchedRow.Verdict], left: Set<String>) {
            let fixture = try PostgresFixture()
            try fixture.server.sql("""
                CREATE TABLE \(fixture.table) (id serial PRIMARY KEY, token text NOT NULL, registered_at \(columnType));
                INSERT INTO \(fixture.table) (token, registered_at) VALUES
                  ('\(hexToken(1))', '2025-12-22 16:46:28.278'), ('\(hexToken(2))', '2025-12-22 16:46:28.278999'),
                  ('\(hexToken(3))', '2025-12-22 16:46:28.279'), ('\(hexToken(4))', '2025-12-22 16:46:28.279001'),
                  ('\(hexToken(5))', '2025-12-22 16:46:28.280'), ('\(hexToken(6))', NULL),
                  ('\(hexToken(7))', '2030-01-01 00:00:00');
                """)
            let database = try fixture.open()
            let plan = try fixture.plan(database, registeredAt: "registered_at")
            let entries = (1...6).map { ScratchEntry(token: hexToken($0), reason: "Unregistered", unregisteredAt: unregisteredAt) }
                + [ScratchEntry(token: hexToken(7), reason: "BadDeviceToken", unregisteredAt: nil)]
            let (matches, changed) = try fixture.runBatch(database, plan, entries)
            #expect(changed == 4)
            let left = Set(try fixture.server.sql("SELECT token FROM \(fixture.table)").split(separator: "\n").map(String.init))
            return (fixture.verdicts(matches), left)
        }

        func expectApplesRule(_ verdicts: [String: MatchedRow.Verdict], _ left: Set<String>) {
            #expect(verdicts == [hexToken(1): .affected, hexToken(2): .affected, hexToken(3): .kept,
                                 hexToken(4): .kept, hexToken(5): .kept, hexToken(6): .affected, hexToken(7): .unjudged])
            #expect(left == [hexToken(3), hexToken(4), hexToken(5)])
        }

        @Test func timestampWithoutTimeZoneIsReadAsUTCAndEqualIsKept() throws {
            let (verdicts, left) = try judge(columnType: "timestamp")
            expectApplesRule(verdicts, left)
        }

        @Test func timestampWithTimeZoneIsComparedAsAnInstant() throws {
            let (verdicts, left) = try judge(columnType: "timestamptz")
            expectApplesRule(verdicts, left)
        }

        @Test func aSessionInAnotherTimeZoneDoesNotShiftTheRule() throws {
            // A server, database or role may set another zone; the session reads UTC all the same.
            let fixture = try PostgresFixture()
            try fixture.server.sql("""
                CREATE TABLE \(fixture.table) (token text PRIMARY KEY, registered_at timestamp);
                INSERT INTO \(fixture.table) VALUES ('\(hexToken(1))', '2025-12-22 16:46:28.278'),
                                                    ('\(hexToken(2))', '2025-12-22 16:46:28.280');
                """)
            let database = try PostgresDatabase(
                url: fixture.url(parameters: [("options", "-c TimeZone=America/New_York")]), password: nil)
            let plan = try fixture.plan(database, registeredAt: "registered_at")
            let (matches, _) = try fixture.runBatch(database, plan, [1, 2].map {
                ScratchEntry(token: hexToken($0), reason: "Unregistered", unregisteredAt: unregisteredAt)
            })
            #expect(fixture.verdicts(matches) == [hexToken(1): .affected, hexToken(2): .kept])
        }

        @Test func withoutARegisteredAtColumnEveryMatchedRowIsAffected() throws {
            let fixture = try PostgresFixture()
            try fixture.server.sql("""
                CREATE TABLE \(fixture.table) (token text PRIMARY KEY, registered_at timestamptz);
                INSERT INTO \(fixture.table) VALUES ('\(hexToken(1))', '2030-01-01'), ('\(hexToken(2))', NULL);
                """)
            let database = try fixture.open()
            let plan = try fixture.plan(database)
            let (matches, changed) = try fixture.runBatch(database, plan, [
                ScratchEntry(token: hexToken(1), reason: "Unregistered", unregisteredAt: unregisteredAt),
                ScratchEntry(token: hexToken(2), reason: "BadDeviceToken", unregisteredAt: nil),
            ])
            #expect(fixture.verdicts(matches) == [hexToken(1): .affected, hexToken(2): .unjudged])
            #expect(changed == 2)
        }
    }
}
