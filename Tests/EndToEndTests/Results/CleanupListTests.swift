import Foundation
import Testing
import TestSupport

/// dead-tokens.csv, the list a cleanup job deletes from the app's database, names a token only
/// when APNs' answer proves it dead for the environment the row was meant for (issue 29, point 1):
/// a BadDeviceToken counts only once the credential group has had a 200 or 410.
@Suite(.serialized) struct CleanupListTests {
    typealias Rig = SendCampaignTests.Rig

    static func tokens(_ rig: Rig) throws -> [String] {
        try String(contentsOfFile: rig.csv, encoding: .utf8).split(separator: "\n").dropFirst()
            .map { String($0.prefix(while: { $0 != "," })) }
    }

    /// A `--respond-file` answering `tokens` 400 BadDeviceToken.
    static func badDeviceTokens(_ rig: Rig, _ tokens: [String], name: String = "respond.txt") throws -> String {
        try rig.scratch.write(name, tokens.map { "\($0),400,BadDeviceToken" }.joined(separator: "\n") + "\n")
    }

    static func run(_ rig: Rig, _ mock: MockServerProcess, out: String, _ extra: [String] = []) throws -> CampaignRun {
        let arguments = rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: rig.csv, out: out) + extra
        return CampaignRun(result: try Binary.run(arguments), outDirectory: out)
    }

    /// The bad night of the issue: sandbox tokens sent to production. The run stops, lists none of
    /// the tokens APNs answered, and the operator's fix (the right environment, `--resume`) sends
    /// every one of them again: they are delivered.
    @Test func aWrongEnvironmentStopListsNoTokenAndResumeWithTheRightEnvironmentDeliversThem() throws {
        let rig = try Rig(rows: 600)
        let tokens = try Self.tokens(rig)
        // Production answers every one of these (sandbox) tokens BadDeviceToken.
        let production = try rig.mock(["--respond-file", try Self.badDeviceTokens(rig, tokens)])
        let out = rig.scratch.path("out")
        let first = try Self.run(rig, production, out: out)
        production.stop()
        #expect(first.result.status == 2, "\(first.result.stdout)\(first.result.stderr)")
        #expect(first.result.stdout.contains("--environment"), "the advice names the flag to fix: \(first.result.stdout)")
        try first.checkEveryRowExactlyOnce(rows: 600)
        let answered = Set(try production.records().filter { $0["status"] as? Int == 400 }
            .compactMap { ($0["device_token"] as? String)?.lowercased() })
        #expect(answered.count >= 100, "the verdict came after the detector's window: \(answered.count)")
        #expect(try first.deadTokens.isEmpty, "no token APNs answered before the stop is listed")
        let records = try first.records
        #expect(records.allSatisfy { $0["outcome"] as? String == "aborted" && $0["reason"] as? String == "WrongEnvironment" })
        let answeredRows = records.filter { $0["status"] as? Int == 400 }
        #expect(answeredRows.count == answered.count, "each answered row keeps APNs' answer in its record")
        #expect(try first.summary["bad_token"] as? Int == 0)

        // The fix: the sandbox environment, the same command with --resume (only the input is fingerprinted).
        let sandbox = try rig.mock(["--environment", "sandbox"])
        let second = try Self.run(rig, sandbox, out: out, ["--resume", "--environment", "sandbox"])
        sandbox.stop()
        #expect(second.result.status == 0, "\(second.result.stdout)\(second.result.stderr)")
        try second.checkEveryRowExactlyOnce(rows: 600)
        #expect(try second.summary["delivered"] as? Int == 600)
        #expect(try second.deadTokens.isEmpty)
        let delivered = Set(try sandbox.records().filter { $0["status"] as? Int == 200 }
            .compactMap { ($0["device_token"] as? String)?.lowercased() })
        #expect(answered.subtracting(delivered).isEmpty,
                "every token answered BadDeviceToken in production is delivered: \(answered.subtracting(delivered).count) are not")
    }

    /// Rows held back (answered BadDeviceToken, the environment unproven) when a kill comes have no
    /// record, and APNs delivered nothing for them: the crash did not lose a delivery, so the resume
    /// sends them again even under `--no-resend-lost`, and does not count them as resent.
    @Test func heldRowsAKillCaughtAreSentAgainEvenUnderNoResendLost() throws {
        let rig = try Rig(rows: 60)
        let production = try rig.mock(["--respond-file", try Self.badDeviceTokens(rig, try Self.tokens(rig))])
        let out = rig.scratch.path("out")
        // 20 rows a second: about 30 answered and held when the kill comes 1.5 s in.
        _ = try CrashWindowTests.sendKilled(rig, production, out: out, after: 1.5, extra: ["--rate", "20"])
        production.stop()
        let held = Set(try production.records().compactMap { $0["device_token"] as? String })
        try #require(held.count >= 10, "rows were answered before the kill: \(held.count)")

        let sandbox = try rig.mock(["--environment", "sandbox"])
        let resumed = try SendResumeTests.send(rig, sandbox, input: rig.csv, out: out,
                                               ["--resume", "--no-resend-lost", "--environment", "sandbox"])
        sandbox.stop()
        try resumed.checkEveryRowExactlyOnce(rows: 60)
        let records = try resumed.records
        let withheld = records.filter { $0["reason"] as? String == "LostInCrash" }.compactMap { $0["device_token"] as? String }
        #expect(Set(withheld).isDisjoint(with: held), "held rows withheld as LostInCrash: \(withheld.count)")
        let delivered = Set(records.filter { $0["outcome"] as? String == "delivered" }.compactMap { $0["device_token"] as? String })
        #expect(held.isSubset(of: delivered), "every held row is sent again and delivered")
        #expect(try resumed.summary["resent_after_crash"] as? Int ?? -1 <= 2, "at most the rows in flight at the kill")
        #expect(try resumed.deadTokens.isEmpty)
    }

    /// A healthy run's truly bad tokens are still listed, those answered before the first 200 too
    /// (held, then released by it), and nothing else is.
    @Test func aHealthyRunListsExactlyItsBadTokensThoseBeforeTheFirstDeliveryIncluded() throws {
        let rig = try Rig(rows: 400, unregisteredRate: 0.03, seed: 5)
        let tokens = try Self.tokens(rig)
        let unregistered = Set(try String(contentsOfFile: rig.unregisteredFile, encoding: .utf8).split(separator: "\n")
            .map { String($0.prefix(while: { $0 != "," })) })
        let bad = [0, 1, 2, 3, 4, 150, 300].map { tokens[$0] }.filter { !unregistered.contains($0) }
        let mock = try rig.mock(["--respond-file", try Self.badDeviceTokens(rig, bad)])
        // One connection: its one first request (row 1, a bad token) is answered before any other
        // goes out, so BadDeviceToken answers surely come before the first 200.
        let run = try Self.run(rig, mock, out: rig.scratch.path("out"), ["--connections", "1"])
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stdout)\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 400)
        let order = try mock.records().compactMap { $0["status"] as? Int }
        let firstDelivery = order.firstIndex(of: 200) ?? order.count
        #expect(order[..<firstDelivery].contains(400), "some BadDeviceToken came before the first 200: \(order.prefix(10))")
        #expect(try run.summary["bad_token"] as? Int == bad.count)
        let listed = try run.deadTokens.map { $0[0] }
        #expect(listed.count == bad.count + unregistered.count, "one line per dead token: \(listed.count)")
        #expect(Set(listed) == Set(bad).union(unregistered))
    }

    /// A campaign smaller than the detector's window whose every answer is BadDeviceToken ends
    /// with its rows still held: nothing proves the environment, so none is listed; they end
    /// `aborted` `WrongEnvironment` (exit 2, stderr says why) and `--resume` sends them again.
    @Test func aRunThatEndsWithoutAnyDeliveryListsNoneOfItsBadDeviceTokens() throws {
        let rig = try Rig(rows: 30)
        let tokens = try Self.tokens(rig)
        let mock = try rig.mock(["--respond-file", try Self.badDeviceTokens(rig, tokens)])
        let run = try Self.run(rig, mock, out: rig.scratch.path("out"))
        mock.stop()
        #expect(run.result.status == 2, "\(run.result.stdout)\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 30)
        #expect(try run.deadTokens.isEmpty)
        #expect(try run.records.allSatisfy {
            $0["outcome"] as? String == "aborted" && $0["reason"] as? String == "WrongEnvironment" && $0["status"] as? Int == 400
        })
        #expect(run.result.stderr.contains("30 rows were answered BadDeviceToken") && run.result.stderr.contains("--resume"),
                "\(run.result.stderr)")
    }

    typealias Apps = ManyAppsEndToEndTests

    /// Sends `rows` with keys A, B (production) and C (sandbox) to a mock of each environment,
    /// each answering BadDeviceToken for its own list of tokens; both mocks stopped.
    static func sendToBoth(_ setup: Apps.Setup, _ rows: [Apps.Row], productionRefuses: [String], sandboxRefuses: [String],
                           flags: [String]) throws -> CampaignRun {
        let keysFile = try setup.keysFile("keys.toml")
        let respond = { (name: String, tokens: [String]) in
            try setup.scratch.write(name, tokens.map { "\($0),400,BadDeviceToken" }.joined(separator: "\n") + "\n")
        }
        let production = try setup.mock("production", keysFile: keysFile,
                                        extra: ["--respond-file", try respond("production.csv", productionRefuses)])
        let sandbox = try setup.mock("sandbox", keysFile: keysFile, extra: ["--respond-file", try respond("sandbox.csv", sandboxRefuses)])
        defer {
            production.stop()
            sandbox.stop()
        }
        return try setup.send(input: try setup.csv(rows), keysFile: keysFile, production: production, sandbox: sandbox,
                              flags: ["--connections", "2"] + flags)
    }

    /// Several keys: the group whose every answer is BadDeviceToken (production tokens labelled
    /// sandbox) lists none of them, while the healthy group's bad tokens are listed.
    @Test func aGroupThatNeverDeliversListsNothingWhileAHealthyGroupListsItsBadTokens() throws {
        let production = (1...40).map { Apps.Row(token: Apps.token($0), topic: Apps.three) }
        let sandbox = (41...60).map { Apps.Row(token: Apps.token($0), topic: Apps.one, environment: "sandbox") }
        let bad = [production[0].token, production[1].token, production[20].token]
        let setup = try Apps.Setup()
        defer { withExtendedLifetime(setup) {} }  // its scratch directory holds the run's files
        let run = try Self.sendToBoth(setup, production + sandbox, productionRefuses: bad,
                                      sandboxRefuses: sandbox.map(\.token), flags: [])
        #expect(run.result.status == 2, "\(run.result.stdout)\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 60)
        #expect(try run.deadTokens.map { $0[0] }.sorted() == bad.sorted())
        for record in try run.records where (record["row"] as? Int ?? 0) > 40 {
            #expect(record["outcome"] as? String == "aborted" && record["reason"] as? String == "WrongEnvironment",
                    "\(record)")
        }
        #expect(run.result.stderr.contains("CCCCCCCCC3 in sandbox"), "\(run.result.stderr)")
    }

    /// `--environment-fallback`: a token refused in a proven production and in a sandbox that
    /// never delivered is dead (a live token would be production's or sandbox's); the run exits 0.
    @Test func underFallbackATokenRefusedInBothIsListedWhenOneEnvironmentIsProven() throws {
        let rows = (1...30).map { Apps.Row(token: Apps.token($0), topic: Apps.one) }
        let dead = [rows[0].token, rows[1].token, rows[15].token]
        let setup = try Apps.Setup()
        defer { withExtendedLifetime(setup) {} }  // its scratch directory holds the run's files
        let run = try Self.sendToBoth(setup, rows, productionRefuses: dead, sandboxRefuses: dead,
                                      flags: ["--environment-fallback"])
        #expect(run.result.status == 0, "\(run.result.stdout)\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 30)
        #expect(try run.deadTokens.map { $0[0] }.sorted() == dead.sorted())
    }
}
