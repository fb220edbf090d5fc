import Cleanup
import Foundation
import Testing
import TestSupport

/// Apple's rule and the run's guarantees against real SQLite files.
@Suite struct SQLiteCleanupTests {
    @Test func aRowRegisteredBeforeTheTokenDiedIsDeletedOneRegisteredAtOrAfterIsKept() throws {
        let fixture = try SQLiteFixture("""
            INSERT INTO devices (id, token, registered_at) VALUES
              (1, 'aa01', '2025-12-22T16:46:28.278Z'), (2, 'aa02', '2025-12-22T16:46:28.279Z'),
              (3, 'aa03', '2025-12-23T09:00:00Z'), (4, 'aa04', NULL);
            """)
        let (counts, _) = try fixture.cleanup(["aa01", "aa02", "aa03", "aa04"].map { dead($0) })
        #expect(try fixture.ids() == [2, 3])
        #expect(counts.matched == 4)
        #expect(counts.affected == 2)
        #expect(counts.keptRegisteredAfter == 2)
        #expect(counts.ruleApplied)
    }

    @Test func djangoRailsTextUnixSecondsAndOffsetsAreComparedAsInstants() throws {
        // 2025-12-22T16:46:28.279Z is 1766421988.279 Unix seconds.
        let fixture = try SQLiteFixture("""
            INSERT INTO devices (id, token, registered_at) VALUES
              (1, 'aa01', '2025-12-22 16:46:28.278999'), (2, 'aa02', '2025-12-22 16:46:28.279999'),
              (3, 'aa03', 1766421988), (4, 'aa04', 1766421988.5),
              (5, 'aa05', '2025-12-22T17:46:28.279+01:00'), (6, 'aa06', '2025-12-22T17:46:28.278+01:00'),
              (7, 'aa07', 'last tuesday'), (8, 'aa08', '2025-12-22 16:46');
            """)
        let (counts, _) = try fixture.cleanup((1...8).map { dead("aa0\($0)") })
        // Deleted: .278999 cut to .278; 1766421988 s; the +01:00 time a millisecond early; 16:46:00.
        #expect(try fixture.ids() == [2, 4, 5, 7])
        #expect(counts.affected == 4)
        #expect(counts.keptRegisteredAfter == 3)
        #expect(counts.unreadableRegisteredAt == 1)
    }

    @Test func aLineWithoutUnregisteredAtIsAffectedAndCountedUnjudged() throws {
        let fixture = try SQLiteFixture("""
            INSERT INTO devices (id, token, registered_at) VALUES (1, 'aa01', '2030-01-01T00:00:00Z'), (2, 'aa02', NULL);
            """)
        let (counts, _) = try fixture.cleanup([dead("aa01", "BadDeviceToken", at: nil), dead("aa02", at: nil)])
        #expect(try fixture.ids() == [])
        #expect(counts.affected == 2)
        #expect(counts.unjudged == 2)
        #expect(counts.byReason == ["BadDeviceToken": 1, "Unregistered": 1])
    }

    @Test func withoutARegisteredAtColumnEveryMatchedRowIsAffectedAndTheRuleIsSaidNotApplied() throws {
        let fixture = try SQLiteFixture("INSERT INTO devices (id, token, registered_at) VALUES (1, 'aa01', '2030-01-01');")
        let (counts, _) = try fixture.cleanup([dead("aa01")], registeredAt: nil)
        #expect(try fixture.ids() == [])
        #expect(!counts.ruleApplied)
    }

    @Test func aHostileTokenIsOnlyAValue() throws {
        let hostile = "'; DROP TABLE devices; --"
        let fixture = try SQLiteFixture("INSERT INTO devices (id, token) VALUES (1, 'aa01'), (2, 'x'' or 1=1 --');")
        let (counts, _) = try fixture.cleanup([dead(hostile.lowercased()), dead("x' or 1=1 --")])
        #expect(try fixture.ids() == [1])
        #expect(counts.notFound == 1)
        #expect(counts.affected == 1)
    }

    @Test func topicAndEnvironmentRestrictTheRowsTouched() throws {
        let fixture = try SQLiteFixture("""
            INSERT INTO devices (id, token, topic, environment) VALUES
              (1, 'aa01', 'com.example.app', 'production'), (2, 'aa01', 'com.example.other', 'production'),
              (3, 'aa01', 'com.example.app', 'sandbox');
            """)
        let restrictions = [CleanupRequest.Restriction(column: "topic", value: "com.example.app", flag: "--topic-column"),
                            CleanupRequest.Restriction(column: "environment", value: "production", flag: "--environment-column")]
        let (counts, _) = try fixture.cleanup([dead("aa01")], restrictions: restrictions)
        #expect(try fixture.ids() == [2, 3])
        #expect(counts.matched == 1)
    }

    @Test func uppercaseTokensInTheTableAreMatchedAndKeepTheirCase() throws {
        let fixture = try SQLiteFixture("INSERT INTO devices (id, token) VALUES (1, 'AB01'), (2, 'ab02');")
        let (counts, audit) = try fixture.cleanup([dead("ab01"), dead("ab02")], mark: "dead_at")
        #expect(counts.affected == 2)
        #expect(audit.map(\.tableToken) == ["AB01", "ab02"])
        #expect(try fixture.sqlite("SELECT token, dead_at FROM devices ORDER BY id")
                == "AB01|2025-12-22T16:46:28.279Z\nab02|2025-12-22T16:46:28.279Z\n")
    }

    @Test func aNocaseColumnMatchesEachRowOnce() throws {
        let schema = "CREATE TABLE devices (id INTEGER PRIMARY KEY, token TEXT COLLATE NOCASE UNIQUE, registered_at TEXT);"
        let fixture = try SQLiteFixture(schema: schema, "INSERT INTO devices VALUES (1, 'AB01', NULL), (2, 'ab02', NULL);")
        #expect(try fixture.database().describe(TableName(schema: nil, name: "devices"))?.column(named: "token")?.caseInsensitive == true)
        let (counts, _) = try fixture.cleanup([dead("ab01"), dead("ab02")])
        #expect(counts.matched == 2)
        #expect(try fixture.ids() == [])
    }

    @Test func markSetsOnlyEmptyMarksAndARerunAffectsNothing() throws {
        let fixture = try SQLiteFixture("""
            INSERT INTO devices (id, token, dead_at) VALUES (1, 'aa01', NULL), (2, 'aa02', 'set by the app'), (3, 'aa03', NULL);
            """)
        let entries = [dead("aa01"), dead("aa02"), dead("aa03", at: nil)]
        let first = try fixture.cleanup(entries, mark: "dead_at")
        #expect(first.counts.affected == 2)
        #expect(first.counts.alreadyMarked == 1)
        #expect(try fixture.sqlite("SELECT dead_at FROM devices ORDER BY id")
                == "2025-12-22T16:46:28.279Z\nset by the app\n2027-01-15T08:00:00.000Z\n")
        let second = try fixture.cleanup(entries, mark: "dead_at")
        #expect(second.counts.affected == 0)
        #expect(second.counts.alreadyMarked == 3)
        #expect(try fixture.ids() == [1, 2, 3])
    }

    @Test func deletingTwiceAffectsNothingTheSecondTime() throws {
        let fixture = try SQLiteFixture("INSERT INTO devices (id, token) VALUES (1, 'aa01'), (2, 'aa02'), (3, 'aa03');")
        let entries = [dead("aa01"), dead("aa02")]
        #expect(try fixture.cleanup(entries).counts.affected == 2)
        let second = try fixture.cleanup(entries).counts
        #expect(second.affected == 0)
        #expect(second.notFound == 2)
        #expect(try fixture.ids() == [3])
    }

    @Test func aDryRunLeavesTheFileByteForByteAndCountsWhatARunDoes() throws {
        let fixture = try SQLiteFixture("""
            INSERT INTO devices (id, token, registered_at) VALUES (1, 'aa01', NULL), (2, 'aa02', '2030-01-01'), (3, 'aa03', NULL);
            """)
        let entries = [dead("aa01"), dead("aa02"), dead("aa03", at: nil), dead("ff00")]
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.path))
        let dry = try fixture.cleanup(entries, options: .init(dryRun: true))
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.path)) == before)
        #expect(dry.counts.dryRun)
        #expect(dry.audit.map(\.action) == ["would-delete", "would-delete"])
        var real = try fixture.cleanup(entries).counts
        real.dryRun = true
        #expect(real == dry.counts)
    }

    @Test func maxAffectedChangesNothingWhenMoreRowsWouldBeAffected() throws {
        let fixture = try SQLiteFixture("INSERT INTO devices (id, token) VALUES (1, 'aa01'), (2, 'aa02'), (3, 'aa03');")
        let entries = [dead("aa01"), dead("aa02"), dead("aa03")]
        let failure = #expect(throws: CleanupFailure.self) {
            try fixture.cleanup(entries, options: .init(batchSize: 1, maxAffected: 2))
        }
        #expect(failure?.status == 1)
        #expect(failure?.description.contains("3 rows would be affected") == true)
        #expect(try fixture.ids() == [1, 2, 3])
        #expect(try fixture.cleanup(entries, options: .init(maxAffected: 3)).counts.affected == 3)
    }

    @Test func theAuditListsExactlyTheAffectedRows() throws {
        let fixture = try SQLiteFixture("""
            INSERT INTO devices (id, token, registered_at) VALUES (7, 'aa01', NULL), (8, 'aa02', '2030-01-01'), (9, 'aa03', NULL);
            """)
        let (_, audit) = try fixture.cleanup([dead("aa01"), dead("aa02"), dead("aa03", "ExpiredToken", at: nil)])
        #expect(audit == [
            AuditedRow(keys: ["7"], tableToken: "aa01", reason: "Unregistered", unregisteredAt: SQLiteFixture.unregisteredAt, action: "delete"),
            AuditedRow(keys: ["9"], tableToken: "aa03", reason: "ExpiredToken", unregisteredAt: nil, action: "delete"),
        ])
    }

    @Test func batchesOfOneTokenCountAsOneBatchOfAll() throws {
        let values = (0..<300).map { "(\($0), '\(String(format: "%064x", $0))', \($0 % 3 == 0 ? "'2030-01-01'" : "NULL"))" }
        let insert = "INSERT INTO devices (id, token, registered_at) VALUES " + values.joined(separator: ", ") + ";"
        let entries = (0..<400).map { dead(String(format: "%064x", $0)) }
        let one = try SQLiteFixture(insert)
        let all = try SQLiteFixture(insert)
        let small = try one.cleanup(entries, options: .init(batchSize: 1)).counts
        var large = try all.cleanup(entries).counts
        #expect(small.batches == 400)
        #expect(small.affected == 200)
        #expect(small.keptRegisteredAfter == 100)
        #expect(small.notFound == 100)
        large.batches = small.batches
        #expect(small == large)
        #expect(try one.ids() == all.ids())
    }

    @Test func aSchemaQualifiedTableAndAWithoutRowidTableWork() throws {
        let schema = "CREATE TABLE devices (id INTEGER, token TEXT, registered_at TEXT, PRIMARY KEY (token, id)) WITHOUT ROWID;"
        let fixture = try SQLiteFixture(schema: schema, "INSERT INTO devices VALUES (1, 'aa01', NULL), (2, 'aa02', NULL);")
        let (counts, audit) = try fixture.cleanup([dead("aa01")], table: "main.devices")
        #expect(counts.affected == 1)
        #expect(audit.first?.keys == ["aa01", "1"])
        #expect(try fixture.ids() == [2])
    }
}
