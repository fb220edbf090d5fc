import Foundation
import Testing
import TestSupport

/// APNs' Development (sandbox) environment answers with `apns-unique-id`, the key to the Push
/// Notifications Console's delivery log: each answered record carries it, and only then (issue 18).
@Suite(.serialized) struct UniqueIDTests {
    /// Checks every record of `run`: answered ones carry a distinct UUID when `expected`, none otherwise.
    static func checkUniqueIDs(_ run: CampaignRun, rows: Int, expected: Bool,
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        try run.checkEveryRowExactlyOnce(rows: rows, sourceLocation: sourceLocation)
        let records = try run.records
        let answered = records.filter { ($0["status"] as? Int ?? 0) != 0 }
        #expect(!answered.isEmpty, sourceLocation: sourceLocation)
        for record in records where (record["status"] as? Int ?? 0) == 0 {
            #expect(record["apns_unique_id"] == nil, "never answered: \(record)", sourceLocation: sourceLocation)
        }
        let ids = answered.compactMap { $0["apns_unique_id"] as? String }
        guard expected else {
            #expect(ids.isEmpty, "production answers carry no apns-unique-id", sourceLocation: sourceLocation)
            return
        }
        #expect(ids.count == answered.count, "every answered record carries one", sourceLocation: sourceLocation)
        // Foundation's parser, not ours, says each is a UUID; written lowercase.
        #expect(ids.allSatisfy { UUID(uuidString: $0) != nil && $0 == $0.lowercased() }, sourceLocation: sourceLocation)
        #expect(Set(ids).count == ids.count, "distinct per row", sourceLocation: sourceLocation)
    }

    @Test func aSandboxMockGivesEveryAnsweredRecordItsOwnUniqueID() throws {
        let rig = try SendCampaignTests.Rig(rows: 400, invalidRate: 0.02, unregisteredRate: 0.05)
        let mock = try rig.mock(["--environment", "sandbox"])
        let run = try rig.send(mock)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try Self.checkUniqueIDs(run, rows: 400, expected: true)
        let records = try run.records
        #expect(records.contains { $0["outcome"] as? String == "unregistered" && $0["apns_unique_id"] is String })
        #expect(records.contains { $0["outcome"] as? String == "rejected" })
    }

    @Test func aProductionMockSendsNoUniqueIDAndRecordsLeaveTheFieldOut() throws {
        let rig = try SendCampaignTests.Rig(rows: 200, unregisteredRate: 0.05)
        for flags in [[], ["--environment", "production"]] {
            let mock = try rig.mock(flags)
            let run = try rig.send(mock)
            mock.stop()
            #expect(run.result.status == 0, "\(run.result.stderr)")
            try Self.checkUniqueIDs(run, rows: 200, expected: false)
        }
    }

    @Test func theEmbeddedMockPlaysSandboxThroughMockOption() throws {
        let rig = try SendCampaignTests.Rig(rows: 150)
        let run = try EmbeddedMockRehearsalTests.send(rig, "out", ["--key-file", rig.key, "--key-id", MockServerProcess.keyID,
                                                                   "--team-id", MockServerProcess.teamID,
                                                                   "--topic", MockServerProcess.topic,
                                                                   "--mock-option", "environment=sandbox"])
        #expect(run.result.status == 0, "\(run.result.stdout)\(run.result.stderr)")
        try Self.checkUniqueIDs(run, rows: 150, expected: true)
    }

    @Test func anUnknownMockEnvironmentStopsWithTheFlagAndTheChoices() throws {
        let result = try Binary.run(["mock-server", "--environment", "staging"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("--environment staging: give production or sandbox"), "\(result.stderr)")
    }
}
