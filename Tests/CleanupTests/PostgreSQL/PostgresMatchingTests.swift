import Cleanup
import Foundation
import Testing

extension PostgresTests {
    /// Which rows a dead token reaches: any case of the token, the named table only, the list's
    /// topic and environment only, and values that are only ever values.
    @Suite struct MatchingTests {
        func entry(_ token: String, at time: Int64? = unregisteredAt) -> ScratchEntry {
            ScratchEntry(token: token, reason: "Unregistered", unregisteredAt: time)
        }

        @Test func tokensMatchInAnyCaseAndKeepTheTablesSpelling() throws {
            let fixture = try PostgresFixture()
            let upper = hexToken(1, prefix: "ef").uppercased()
            try fixture.server.sql("""
                CREATE TABLE \(fixture.table) (token varchar(64) PRIMARY KEY, marked_at timestamptz);
                INSERT INTO \(fixture.table) VALUES ('\(upper)', NULL), ('\(hexToken(2, prefix: "ef"))', NULL);
                """)
            let database = try fixture.open()
            let plan = try fixture.plan(database, mark: "marked_at")
            let (matches, changed) = try fixture.runBatch(database, plan, [entry(hexToken(1, prefix: "ef")),
                                                                          entry(hexToken(2, prefix: "ef"))])
            #expect(Set(matches.map(\.tableToken)) == [upper, hexToken(2, prefix: "ef")])
            #expect(Set(matches.map(\.listToken)) == [hexToken(1, prefix: "ef"), hexToken(2, prefix: "ef")])
            #expect(changed == 2)
            #expect(try fixture.server.sql("SELECT token FROM \(fixture.table) WHERE marked_at IS NOT NULL ORDER BY 1")
                == [upper, hexToken(2, prefix: "ef")].sorted().joined(separator: "\n"))
        }

        @Test func aCitextColumnMatchesMixedCaseWithOneVariant() throws {
            let fixture = try PostgresFixture()
            let mixed = "Ab" + hexToken(1).dropFirst(2)
            try fixture.server.sql("""
                CREATE EXTENSION IF NOT EXISTS citext;
                CREATE TABLE \(fixture.table) (token citext PRIMARY KEY);
                INSERT INTO \(fixture.table) VALUES ('\(mixed)');
                """)
            let database = try fixture.open()
            let plan = try fixture.plan(database)
            #expect(plan.tokenColumn.caseInsensitive)
            #expect(plan.tokenColumn.kind == .text)
            let (matches, changed) = try fixture.runBatch(database, plan, [entry(hexToken(1))])
            #expect(matches.map(\.tableToken) == [mixed])
            #expect(changed == 1)
        }

        @Test func aCharColumnMatchesTokensOfAnyLength() throws {
            let fixture = try PostgresFixture()
            try fixture.server.sql("""
                CREATE TABLE \(fixture.table) (token char(64) PRIMARY KEY);
                INSERT INTO \(fixture.table) VALUES ('\(hexToken(1))');
                """)
            let database = try fixture.open()
            let plan = try fixture.plan(database)
            let (matches, changed) = try fixture.runBatch(database, plan, [entry(hexToken(1)), entry(hexToken(2) + "ffff")])
            #expect(matches.map(\.tableToken) == [hexToken(1)])
            #expect(changed == 1)
        }

        @Test func aDomainColumnTakesListValuesItsCheckWouldRefuse() throws {
            let fixture = try PostgresFixture()
            try fixture.server.sql("""
                CREATE DOMAIN \(fixture.table)_token AS varchar(64) CHECK (VALUE ~ '^[0-9a-f]{64}$');
                CREATE TABLE \(fixture.table) (token \(fixture.table)_token PRIMARY KEY);
                INSERT INTO \(fixture.table) VALUES ('\(hexToken(1))');
                """)
            let database = try fixture.open()
            let plan = try fixture.plan(database)
            #expect(plan.tokenColumn.kind == .text)
            let (matches, changed) = try fixture.runBatch(database, plan, [entry(hexToken(1)), entry("'; DROP TABLE x; --")])
            #expect(matches.map(\.tableToken) == [hexToken(1)])
            #expect(changed == 1)
        }

        @Test func aSchemaQualifiedTableIsTheOnlyOneTouched() throws {
            let fixture = try PostgresFixture()
            let app = "app_" + fixture.table, other = "other_" + fixture.table
            try fixture.server.sql("""
                CREATE SCHEMA \(app); CREATE SCHEMA \(other);
                CREATE TABLE \(app).devices (id bigint PRIMARY KEY, token text NOT NULL);
                CREATE TABLE \(other).devices (id bigint PRIMARY KEY, token text NOT NULL);
                INSERT INTO \(app).devices VALUES (7, '\(hexToken(1))');
                INSERT INTO \(other).devices VALUES (8, '\(hexToken(1))');
                """)
            let database = try fixture.open()
            #expect(try database.describe(TableName(schema: nil, name: "devices")) == nil)
            let table = TableName(schema: app, name: "devices")
            let plan = try fixture.plan(database, table: table)
            #expect(plan.table.table == table)
            #expect(plan.table.primaryKey == ["id"])
            let (matches, changed) = try fixture.runBatch(database, plan, [entry(hexToken(1))])
            #expect(matches.map(\.keys) == [["7"]])
            #expect(changed == 1)
            #expect(try fixture.server.sql("SELECT count(*) FROM \(app).devices") == "0")
            #expect(try fixture.server.sql("SELECT count(*) FROM \(other).devices") == "1")
        }

        @Test func describeReadsKindsAndTheCompositePrimaryKeyInKeyOrder() throws {
            let fixture = try PostgresFixture()
            try fixture.server.sql("""
                CREATE TABLE \(fixture.table) (topic text, token varchar(200), created timestamptz, seen timestamp,
                                              count int, PRIMARY KEY (token, topic));
                """)
            let description = try #require(try fixture.open().describe(TableName(schema: nil, name: fixture.table)))
            #expect(description.primaryKey == ["token", "topic"])
            #expect(description.columns.map(\.kind) == [.text, .text, .timestamp, .timestamp, .other])
            #expect(description.column(named: "token")?.type == "character varying(200)")
            #expect(description.columns.allSatisfy { !$0.caseInsensitive })
            #expect(try fixture.open().describe(TableName(schema: nil, name: "no_such_table")) == nil)
        }

        @Test func topicAndEnvironmentRestrictTheRowsTouched() throws {
            let fixture = try PostgresFixture()
            try fixture.server.sql("""
                CREATE TABLE \(fixture.table) (id int PRIMARY KEY, token text, topic text, environment text);
                INSERT INTO \(fixture.table) VALUES (1, '\(hexToken(1))', 'com.example.app', 'production'),
                  (2, '\(hexToken(1))', 'com.example.other', 'production'),
                  (3, '\(hexToken(1))', 'com.example.app', 'development');
                """)
            let database = try fixture.open()
            let plan = try fixture.plan(database, restrictions: [("topic", "com.example.app"), ("environment", "production")])
            let (matches, changed) = try fixture.runBatch(database, plan, [entry(hexToken(1))])
            #expect(matches.map(\.keys) == [["1"]])
            #expect(changed == 1)
            #expect(try fixture.server.sql("SELECT id FROM \(fixture.table) ORDER BY id") == "2\n3")
        }

        @Test func hostileTokenValuesAreOnlyValuesAndArriveIntact() throws {
            let fixture = try PostgresFixture()
            let hostile = ["'; DROP TABLE \(fixture.table); --", "x' OR '1'='1", "\" OR 1=1 --", "$1", "\\x00'", "NULL",
                           "{a,\"b\"}", " spaced ", "back\\slash\\", "é\u{1F600}"]
            let rows = hostile.map { "($q$\($0)$q$)" }.joined(separator: ", ")
            try fixture.server.sql("""
                CREATE TABLE \(fixture.table) (token text PRIMARY KEY);
                INSERT INTO \(fixture.table) VALUES ('\(hexToken(1))'), ('\(hexToken(2))'), \(rows);
                """)
            let database = try fixture.open()
            let plan = try fixture.plan(database)
            let (matches, changed) = try fixture.runBatch(database, plan, hostile.map { entry($0) } + [entry(hexToken(1) + "\0")])
            #expect(Set(matches.map(\.tableToken)) == Set(hostile))
            #expect(changed == hostile.count)
            #expect(try fixture.server.sql("SELECT token FROM \(fixture.table) ORDER BY 1") == "\(hexToken(1))\n\(hexToken(2))")
        }

        @Test func identifiersWithQuotesAreQuoted() throws {
            let fixture = try PostgresFixture()
            let table = fixture.table + "\"; DROP TABLE x; --"
            let column = "to\"ken"
            try fixture.server.sql("""
                CREATE TABLE "\(table.replacingOccurrences(of: "\"", with: "\"\""))" ("to""ken" text PRIMARY KEY, "Topic" text);
                INSERT INTO "\(table.replacingOccurrences(of: "\"", with: "\"\""))" VALUES ('\(hexToken(1))', 'a'), ('\(hexToken(2))', 'a');
                """)
            let database = try fixture.open()
            let plan = try fixture.plan(database, table: TableName(schema: nil, name: table), token: column,
                                        restrictions: [("Topic", "a")])
            let (_, changed) = try fixture.runBatch(database, plan, [entry(hexToken(1))])
            #expect(changed == 1)
        }

        @Test func markSetsOnlyWhereNullAndARerunChangesNothing() throws {
            let fixture = try PostgresFixture()
            try fixture.server.sql("""
                CREATE TABLE \(fixture.table) (id int PRIMARY KEY, token text, registered_at timestamptz, marked_at timestamp);
                INSERT INTO \(fixture.table) VALUES (1, '\(hexToken(1))', '2025-01-01', NULL),
                  (2, '\(hexToken(2))', '2025-01-01', '2024-06-01 00:00:00'), (3, '\(hexToken(3))', NULL, NULL),
                  (4, '\(hexToken(4))', '2030-01-01', NULL);
                """)
            let database = try fixture.open()
            let plan = try fixture.plan(database, registeredAt: "registered_at", mark: "marked_at")
            let entries = [entry(hexToken(1)), entry(hexToken(2)), entry(hexToken(3), at: nil), entry(hexToken(4))]
            let runTime: Int64 = 1_800_000_000_123
            let first = try fixture.runBatch(database, plan, entries, runTime: runTime)
            #expect(fixture.verdicts(first.matches) == [hexToken(1): .affected, hexToken(2): .alreadyMarked,
                                                        hexToken(3): .unjudged, hexToken(4): .kept])
            #expect(first.changed == 2)
            #expect(try fixture.server.sql("SELECT id, marked_at FROM \(fixture.table) ORDER BY id") == """
                1|2025-12-22 16:46:28.279
                2|2024-06-01 00:00:00
                3|2027-01-15 08:00:00.123
                4|
                """)
            let second = try fixture.runBatch(database, plan, entries, runTime: runTime + 1)
            #expect(second.changed == 0)
            #expect(second.matches.filter { $0.verdict == .affected || $0.verdict == .unjudged }.isEmpty)
        }

        @Test func aRollbackLeavesTheTableAsItWas() throws {
            let fixture = try PostgresFixture()
            try fixture.server.sql("CREATE TABLE \(fixture.table) (token text PRIMARY KEY); INSERT INTO \(fixture.table) VALUES ('\(hexToken(1))');")
            let database = try fixture.open()
            let plan = try fixture.plan(database)
            try database.prepareScratch(for: plan)
            try database.begin()
            try database.fillScratch([entry(hexToken(1))], for: plan)
            #expect(try database.apply(plan, runTime: 0) == 1)
            try database.rollback()
            #expect(try fixture.server.sql("SELECT count(*) FROM \(fixture.table)") == "1")
        }
    }
}
