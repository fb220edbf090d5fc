import Foundation
import Testing
import TestSupport

/// A channel is known only in the APNs environment that created it: a broadcast sent to the other
/// one is answered ChannelNotRegistered for every channel, though each is alive. dead-channels.csv,
/// a list for deletion, must not name them: without a delivered row to prove the environment they
/// end `aborted` `WrongEnvironment`, and `--resume` in the right environment sends them again.
@Suite struct BroadcastEnvironmentTests {
    typealias Rig = BroadcastRig

    /// Two mocks, one per environment, and `count` channels the sandbox one created.
    static func sandboxChannels(_ rig: Rig, count: Int) throws -> (sandbox: MockServerProcess, production: MockServerProcess,
                                                                  ids: [String]) {
        let sandbox = try MockServerProcess(scratch: rig.scratch, keyFile: rig.key, extra: ["--environment", "sandbox"])
        let production = try MockServerProcess(scratch: rig.scratch, keyFile: rig.key)
        let ids = try BroadcastCampaignTests.createChannels(rig, sandbox, ["--count", "\(count)", "--environment", "sandbox"])
        return (sandbox, production, ids)
    }

    /// The bad night: sandbox channels broadcast to production. The window's ChannelNotRegistered
    /// answers without a 200 stop the run (exit 2, as send's wrong environment), no channel is
    /// listed, and the operator's fix (the sandbox, `--resume`) delivers every row.
    @Test func sandboxChannelsBroadcastToProductionAreNotListedAndResumeDeliversThem() throws {
        let rig = try Rig()
        let (sandbox, production, ids) = try Self.sandboxChannels(rig, count: 5)
        defer { sandbox.stop(); production.stop() }
        try #require(ids.count == 5)
        let rows = 250
        let input = try rig.csv("u.csv", (1...rows).map { "\(ids[$0 % ids.count]),\(Rig.update($0)),,," })
        let first = try rig.broadcast(input, out: "out", endpoint: Rig.endpoint(production), ["--connections", "1"])
        #expect(first.result.status == 2, "\(first.result.stdout)\(first.result.stderr)")
        #expect(first.result.stderr.contains("look like channels of the other APNs environment")
                && first.result.stderr.contains("--environment"), "stderr says why and what to fix: \(first.result.stderr)")
        try first.checkEveryRowExactlyOnce(rows: rows)
        let records = try first.records
        #expect(records.allSatisfy { $0["outcome"] as? String == "aborted" && $0["reason"] as? String == "WrongEnvironment" },
                "\(records.filter { $0["reason"] as? String != "WrongEnvironment" }.prefix(3))")
        let answered = records.filter { $0["status"] as? Int == 400 }.count
        #expect(answered >= 100 && answered < rows, "the window's answers made the verdict, then the run stopped: \(answered)")
        #expect(try first.deadChannels.isEmpty, "no live channel is listed for deletion")
        #expect(try first.summary["failed"] as? Int == 0)

        let second = try rig.broadcast(input, out: "out", endpoint: Rig.endpoint(sandbox), ["--resume", "--environment", "sandbox"])
        #expect(second.result.status == 0, "\(second.result.stdout)\(second.result.stderr)")
        try second.checkEveryRowExactlyOnce(rows: rows)
        #expect(try second.summary["delivered"] as? Int == rows)
        #expect(try second.deadChannels.isEmpty)
    }

    /// Fewer rows than the window, every one ChannelNotRegistered: no verdict comes while sending,
    /// so the run's end gives it. None is listed, and stderr names `--environment`.
    @Test func aShortBroadcastToTheWrongEnvironmentEndsUnprovenAtTheEnd() throws {
        let rig = try Rig()
        let (sandbox, production, ids) = try Self.sandboxChannels(rig, count: 3)
        defer { sandbox.stop(); production.stop() }
        let rows = 12
        let input = try rig.csv("u.csv", (1...rows).map { "\(ids[$0 % ids.count]),\(Rig.update($0)),,," })
        let run = try rig.broadcast(input, out: "out", endpoint: Rig.endpoint(production))
        #expect(run.result.status == 2, "\(run.result.stdout)\(run.result.stderr)")
        #expect(run.result.stderr.contains("\(rows) rows were answered ChannelNotRegistered")
                && run.result.stderr.contains("--environment"), "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: rows)
        let records = try run.records
        #expect(records.allSatisfy { $0["outcome"] as? String == "aborted" && $0["reason"] as? String == "WrongEnvironment"
                                     && $0["status"] as? Int == 400 }, "each keeps APNs' answer: \(records.prefix(3))")
        #expect(try run.deadChannels.isEmpty)
    }

    /// In the right environment a deleted channel among live ones is still listed: the live ones'
    /// 200s prove the environment, and the refused rows end `failed ChannelNotRegistered`.
    @Test func aDeletedChannelAmongLiveOnesInTheRightEnvironmentIsListed() throws {
        let rig = try Rig()
        let (sandbox, production, ids) = try Self.sandboxChannels(rig, count: 3)
        defer { sandbox.stop(); production.stop() }
        let removal = try Binary.run(["channels", "delete", "--bundle-id", MockServerProcess.topic, "--channel-id", ids[0],
                                      "--environment", "sandbox"] + Rig.endpoint(sandbox) + rig.token)
        try #require(removal.status == 0, "\(removal.stderr)")
        let rows = 30
        // The deleted channel's rows come first, before any 200 could prove the environment.
        let input = try rig.csv("u.csv", (1...rows).map { "\(ids[$0 <= 5 ? 0 : 1 + $0 % 2]),\(Rig.update($0)),,," })
        let run = try rig.broadcast(input, out: "out", endpoint: Rig.endpoint(sandbox), ["--environment", "sandbox"])
        #expect(run.result.status == 0, "\(run.result.stdout)\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: rows)
        #expect(try run.deadChannels.map { $0[3] }.sorted { Int($0)! < Int($1)! } == (1...5).map(String.init))
        #expect(try run.deadChannels.allSatisfy { $0[0] == ids[0] && $0[1] == "ChannelNotRegistered" })
        #expect(try run.summary["failed"] as? Int == 5 && run.summary["delivered"] as? Int == rows - 5)
    }
}
