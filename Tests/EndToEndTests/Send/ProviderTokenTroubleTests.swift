import Foundation
import Testing
import TestSupport

/// Provider-token trouble on a bad night: one `ExpiredProviderToken` must cost one refresh, not the
/// campaign; tokens that are always "expired" mean this machine's clock is off, said at once.
@Suite(.serialized) struct ProviderTokenTroubleTests {
    typealias Rig = SendCampaignTests.Rig

    /// The first data row's device token, as the mock's --respond-file wants it.
    private static func firstToken(of csv: String) throws -> String {
        let text = try String(contentsOfFile: csv, encoding: .utf8)
        let lines = text.split(separator: "\n", maxSplits: 2)
        try #require(lines.count >= 2)
        return String(lines[1].split(separator: ",")[0])
    }

    @Test func oneExpiredProviderTokenDeliversEveryOtherRow() throws {
        let rig = try Rig(rows: 20_000)
        let script = try rig.scratch.write("respond.csv", "\(try Self.firstToken(of: rig.csv)),403,ExpiredProviderToken,1\n")
        let mock = try rig.mock(["--respond-file", script])
        let out = rig.scratch.path("out-expired-once")
        let arguments = rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: rig.csv, out: out)
            + ["--connections", "4"]
        let run = CampaignRun(result: try Binary.run(arguments), outDirectory: out)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 20_000)
        let summary = try run.summary
        #expect(summary["delivered"] as? Int == 20_000)
        // The refresh makes every connection's next request an update too soon (429
        // TooManyProviderTokenUpdates): each such connection is replaced once, not retried into.
        let byReason = try mock.stats()["by_reason"] as? [String: Int] ?? [:]
        #expect(byReason["ExpiredProviderToken"] == 1)
        #expect((byReason["TooManyProviderTokenUpdates"] ?? 0) <= 4 * 50, "\(byReason)")
    }

    @Test func aClockAnHourBehindStopsWithExitTwoAndSaysToCheckTheClock() throws {
        let rig = try Rig(rows: 2_000)
        let mock = try rig.mock()
        let out = rig.scratch.path("out-clock-behind")
        // An hour and five minutes behind: every token this machine signs is over APNs' hour old.
        let arguments = rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: rig.csv, out: out)
        let run = CampaignRun(result: try FakeTime.run(offset: "-65m", arguments), outDirectory: out)
        mock.stop()
        #expect(run.result.status == 2, "\(run.result.stderr)")
        #expect((run.result.stdout + run.result.stderr).contains("refused the provider token as expired though it is 0 minutes old"), "\(run.result.stderr)")
        #expect((run.result.stdout + run.result.stderr).contains("check this machine's clock"), "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 2_000)
        let summary = try run.summary
        #expect(summary["delivered"] as? Int == 0)
        #expect(summary["aborted"] as? Int == 2_000 - rig.totals.invalid)
        #expect(try (mock.stats()["requests"] as? Int ?? 0) <= 20, "a handful of requests, not the list")
    }
}
