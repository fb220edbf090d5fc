import Foundation
import Testing
import TestSupport

/// An endpoint that cannot be reached says so: within seconds stderr names the endpoint and the
/// cause, once per endpoint and cause; the progress line says that it waits for a connection; a
/// dead endpoint beside live ones is named in a warning and in summary.json; a run that gives up
/// says why on stderr too. A real closed port on 127.0.0.1 refuses; names under `.invalid`
/// (RFC 6761) never resolve.
@Suite(.serialized) struct UnreachableEndpointTests {
    typealias Rig = SendCampaignTests.Rig

    /// `send` to `endpoints` with the rig's key and no --ca-file (nothing there answers TLS).
    static func arguments(_ rig: Rig, endpoints: [String], out: String) -> [String] {
        var arguments = rig.sendArguments(endpoint: endpoints[0], caFile: "", input: rig.csv, out: out)
        if let ca = arguments.firstIndex(of: "--ca-file") { arguments.removeSubrange(ca...ca + 1) }
        for endpoint in endpoints.dropFirst() { arguments += ["--endpoint", endpoint] }
        return arguments
    }

    /// The stderr of a run started with `SendStreamTests.start`, read until `condition` holds or
    /// `limit` seconds (in this build's time) have passed.
    static func stderr(of out: String, within limit: Double, until condition: (String) -> Bool) -> String {
        let deadline = Date().addingTimeInterval(TestTime.seconds(limit))
        var text = SendStreamTests.stderr(out)
        while !condition(text) && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            text = SendStreamTests.stderr(out)
        }
        return text
    }

    static func occurrences(of word: String, in text: String) -> Int {
        text.components(separatedBy: word).count - 1
    }

    @Test func aRefusingEndpointIsNamedOnStderrWithinSecondsOnceWhileTheProgressLineWaits() throws {
        let rig = try Rig(rows: 200)
        let port = try SendCampaignTests.closedLoopbackPort()
        let out = rig.scratch.path("out-refused")
        var arguments = Self.arguments(rig, endpoints: ["127.0.0.1:\(port)"], out: out)
        arguments[try #require(arguments.firstIndex(of: "never"))] = "always"
        let started = Date()
        let process = try SendStreamTests.start(arguments + ["--unreachable-timeout", "120"], out: out)
        defer { SendStreamTests.finish(process, within: 0) }
        let warning = "warning: endpoint 127.0.0.1:\(port): connection refused; retrying"
        let named = Self.stderr(of: out, within: 5) { $0.contains(warning) }
        #expect(named.contains(warning), "named within seconds, not after 120 s: \(named)")
        #expect(Date().timeIntervalSince(started) < TestTime.seconds(5))
        // Retries every 20-200 ms meanwhile: the warning stays one, the progress line says why it waits.
        let waiting = "0/200 rows  0/s  waiting for a connection: 127.0.0.1:\(port) (connection refused)"
        let later = Self.stderr(of: out, within: 6) { Self.occurrences(of: waiting, in: $0) >= 2 }
        #expect(later.contains(waiting), "\(later)")
        #expect(Self.occurrences(of: "connection refused; retrying", in: later) == 1, "once per endpoint and cause: \(later)")

        kill(process.processIdentifier, SIGTERM)
        #expect(SendStreamTests.finish(process, within: 30))
        #expect(process.terminationStatus == 2)
        try CampaignRun(result: .init(status: 2, stdout: "", stderr: ""), outDirectory: out).checkEveryRowExactlyOnce(rows: 200)
    }

    /// A port that takes the TCP connection and never says a word (the kernel completes the
    /// handshake for a socket that listens and never accepts): no failure comes for the 10 s of the
    /// handshake timeout, so the silence itself is named within seconds.
    @Test func aSilentEndpointIsNamedOnStderrWithinSecondsNotAtTheTimeout() throws {
        let rig = try Rig(rows: 50)
        let listener = try SendDryRunTests.SilentListener()
        let port = listener.port
        let out = rig.scratch.path("out-silent")
        let started = Date()
        let process = try SendStreamTests.start(Self.arguments(rig, endpoints: ["127.0.0.1:\(port)"], out: out), out: out)
        defer { SendStreamTests.finish(process, within: 0) }
        let warning = "warning: endpoint 127.0.0.1:\(port): no answer for 3 s to the TCP connect or TLS handshake; still waiting"
        let named = Self.stderr(of: out, within: 8) { $0.contains(warning) }
        // Clock: the wall clock from the start; slack: 5 s past the 3 s warning (the alternative is the 10 s timeout).
        #expect(named.contains(warning), "named before the 10 s timeout: \(named)")
        #expect(Date().timeIntervalSince(started) < TestTime.seconds(8))
        kill(process.processIdentifier, SIGTERM)
        #expect(SendStreamTests.finish(process, within: 30))
        #expect(process.terminationStatus == 2)
        try CampaignRun(result: .init(status: 2, stdout: "", stderr: ""), outDirectory: out).checkEveryRowExactlyOnce(rows: 50)
        withExtendedLifetime(listener) {}
    }

    @Test func aRunThatGivesUpSaysWhyOnStderrNamingTheEndpointAndTheCause() throws {
        let rig = try Rig(rows: 200)
        let port = try SendCampaignTests.closedLoopbackPort()
        let out = rig.scratch.path("out-gave-up")
        let result = try Binary.run(Self.arguments(rig, endpoints: ["127.0.0.1:\(port)"], out: out)
                                    + ["--unreachable-timeout", "1.5"])
        let run = CampaignRun(result: result, outDirectory: out)
        #expect(result.status == 3, "\(result.stderr)")
        let why = "stopped: every endpoint was unreachable for 1.5 s (--unreachable-timeout): 127.0.0.1:\(port) (connection refused)"
        #expect(result.stderr.contains(why), "\(result.stderr)")
        #expect(result.stdout.contains(why), "\(result.stdout)")
        try run.checkEveryRowExactlyOnce(rows: 200)
        let summary = try run.summary
        let unreachable = try #require(summary["unreachable_endpoints"] as? [[String: String]], "\(summary)")
        #expect(unreachable == [["endpoint": "127.0.0.1:\(port)", "cause": "connection refused"]])
        #expect(summary["endpoints"] as? [String] == ["127.0.0.1:\(port)"])
    }

    @Test func aDeadEndpointAmongLiveOnesIsNamedInAWarningAndInTheSummary() throws {
        let rig = try Rig(rows: 2_000)
        let mock = try rig.mock()
        let port = try SendCampaignTests.closedLoopbackPort()
        let out = rig.scratch.path("out-one-dead")
        let arguments = rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: rig.csv, out: out)
            + ["--endpoint", "127.0.0.1:\(port)", "--endpoint", "dead-endpoint.invalid:443", "--connections", "6"]
        let run = CampaignRun(result: try Binary.run(arguments), outDirectory: out)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 2_000)
        let stderr = run.result.stderr
        #expect(Self.occurrences(of: "warning: endpoint 127.0.0.1:\(port): connection refused", in: stderr) == 1, "\(stderr)")
        #expect(Self.occurrences(of: "warning: endpoint dead-endpoint.invalid:443: cannot resolve dead-endpoint.invalid", in: stderr) == 1,
                "\(stderr)")
        let summary = try run.summary
        let unreachable = try #require(summary["unreachable_endpoints"] as? [[String: String]], "\(summary)")
        #expect(unreachable.map { $0["endpoint"] } == ["127.0.0.1:\(port)", "dead-endpoint.invalid:443"])
        #expect(unreachable.first?["cause"] == "connection refused")
        #expect(unreachable.last?["cause"]?.hasPrefix("cannot resolve dead-endpoint.invalid") == true)
        #expect(summary["endpoints"] as? [String] == [mock.endpoint, "127.0.0.1:\(port)", "dead-endpoint.invalid:443"])
        #expect(summary["delivered"] as? Int == 2_000)
    }

    @Test func aNameThatNeverResolvesIsNamedOnStderr() throws {
        let rig = try Rig(rows: 100)
        let out = rig.scratch.path("out-unresolved")
        let result = try Binary.run(Self.arguments(rig, endpoints: ["no-such-host.invalid:443"], out: out)
                                    + ["--unreachable-timeout", "60"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("stopped: cannot resolve no-such-host.invalid"), "\(result.stderr)")
        try CampaignRun(result: result, outDirectory: out).checkEveryRowExactlyOnce(rows: 100)
    }

    @Test(arguments: ["garbage", "prod", "apns.example.invalid", "[::1]"])
    func anEndpointWithNoPortThatIsNoKnownWordIsRefusedBeforeAnythingIsSent(endpoint: String) throws {
        let rig = try Rig(rows: 10)
        let out = rig.scratch.path("out-garbage")
        let result = try Binary.run(Self.arguments(rig, endpoints: [endpoint], out: out) + ["--unreachable-timeout", "5"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("--endpoint \(endpoint): not one of the words production, sandbox or mock, and no port"),
                "\(result.stderr)")
        #expect(result.stderr.contains("production, sandbox, mock, HOST:PORT"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/results.jsonl.zst"), "nothing sent, nothing written")
    }
}
