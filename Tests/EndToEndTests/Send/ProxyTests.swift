import Foundation
import Testing
import TestSupport

/// `send` behind a CONNECT proxy: Debian's real tinyproxy between the built binary and a real
/// mock server, both on 127.0.0.1, each started and stopped by its test.
@Suite(.serialized) struct ProxyTests {
    /// This process's environment without any proxy setting, plus `extra`.
    static func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for name in ["https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"] {
            environment[name] = nil
        }
        return environment.merging(extra) { $1 }
    }

    static func arguments(_ rig: SendCampaignTests.Rig, mock: MockServerProcess, out: String) -> [String] {
        ["send", "--input", rig.csv, "--endpoint", mock.endpoint, "--ca-file", mock.caFile,
         "--key-file", rig.key, "--key-id", MockServerProcess.keyID, "--team-id", MockServerProcess.teamID,
         "--topic", MockServerProcess.topic, "--connections", "2", "--progress", "never", "--out", out]
    }

    @Test func aCampaignThroughTinyproxyDeliversEveryRowOnceAndReconnectsThroughIt() throws {
        let rig = try SendCampaignTests.Rig(rows: 600)
        // GOAWAY every 150 requests: the replacements must tunnel through the proxy too.
        let mock = try MockServerProcess(scratch: rig.scratch, keyFile: rig.key, extra: ["--goaway-after", "150"])
        let proxy = try TinyproxyProcess(scratch: rig.scratch, connectPorts: [mock.port])
        let out = rig.scratch.path("out")
        let result = try Binary.run(Self.arguments(rig, mock: mock, out: out) + ["--proxy", proxy.url],
                                    environment: Self.environment())
        proxy.stop()
        mock.stop()
        let run = CampaignRun(result: result, outDirectory: out)
        #expect(result.status == 0, "\(result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 600)
        #expect(try run.summary["delivered"] as? Int == 600)
        let tunnels = proxy.connectRequests
        #expect(tunnels.allSatisfy { $0.contains("CONNECT 127.0.0.1:\(mock.port) HTTP/1.1") }, "\(tunnels)")
        #expect(tunnels.count >= 4, "2 connections and their replacements after GOAWAY: \(tunnels.count)")
        // Every connection the mock accepted came through the proxy (a tunnel opened as the run
        // ended may never have reached TLS).
        let accepted = try mock.stats()["connections"] as? Int ?? -1
        #expect(accepted >= 4 && accepted <= tunnels.count, "\(accepted) connections, \(tunnels.count) tunnels")
    }

    @Test func httpsProxyInTheEnvironmentAloneRoutesThroughTheProxyLowerCaseWinning() throws {
        let rig = try SendCampaignTests.Rig(rows: 200)
        let mock = try MockServerProcess(scratch: rig.scratch, keyFile: rig.key)
        let proxy = try TinyproxyProcess(scratch: rig.scratch, connectPorts: [mock.port])
        let nothing = try LoopbackPort.free()
        let out = rig.scratch.path("out")
        // Upper case names a port where nothing listens: only the lower-case one can deliver.
        let environment = Self.environment(["https_proxy": proxy.url, "HTTPS_PROXY": "http://127.0.0.1:\(nothing)"])
        let result = try Binary.run(Self.arguments(rig, mock: mock, out: out), environment: environment)
        proxy.stop()
        mock.stop()
        let run = CampaignRun(result: result, outDirectory: out)
        #expect(result.status == 0, "\(result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 200)
        #expect(try run.summary["delivered"] as? Int == 200)
        #expect(proxy.connectRequests.count >= 2, "\(proxy.log)")
    }

    @Test func noProxyNamingTheEndpointGoesDirect() throws {
        let rig = try SendCampaignTests.Rig(rows: 200)
        let mock = try MockServerProcess(scratch: rig.scratch, keyFile: rig.key)
        let proxy = try TinyproxyProcess(scratch: rig.scratch, connectPorts: [mock.port])
        let out = rig.scratch.path("out")
        let environment = Self.environment(["HTTPS_PROXY": proxy.url, "NO_PROXY": "example.com,127.0.0.1"])
        let result = try Binary.run(Self.arguments(rig, mock: mock, out: out), environment: environment)
        proxy.stop()
        mock.stop()
        let run = CampaignRun(result: result, outDirectory: out)
        #expect(result.status == 0, "\(result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 200)
        #expect(try run.summary["delivered"] as? Int == 200)
        #expect(proxy.connectRequests.isEmpty, "\(proxy.log)")
        #expect(try mock.stats()["connections"] as? Int == 2, "both connections went straight to the mock")
    }

    @Test func proxyCredentialsAreSentAndWrongOnesAbortEveryRowWithExitTwo() throws {
        let rig = try SendCampaignTests.Rig(rows: 150)
        let mock = try MockServerProcess(scratch: rig.scratch, keyFile: rig.key)
        let proxy = try TinyproxyProcess(scratch: rig.scratch, connectPorts: [mock.port],
                                         basicAuth: (user: "alice", password: "s3cr3t.pw"))
        defer { proxy.stop() }
        let base = Self.arguments(rig, mock: mock, out: "")
        func send(_ proxyURL: String, _ name: String) throws -> CampaignRun {
            let out = rig.scratch.path(name)
            var arguments = base
            arguments[arguments.count - 1] = out
            return CampaignRun(result: try Binary.run(arguments + ["--proxy", proxyURL], environment: Self.environment()),
                               outDirectory: out)
        }
        let right = try send("http://alice:s3cr3t.pw@127.0.0.1:\(proxy.port)", "out-right")
        #expect(right.result.status == 0, "\(right.result.stderr)")
        try right.checkEveryRowExactlyOnce(rows: 150)
        #expect(try right.summary["delivered"] as? Int == 150)

        let wrong = try send("http://alice:wrong-password@127.0.0.1:\(proxy.port)", "out-wrong")
        let wrongText = wrong.result.stdout + wrong.result.stderr
        #expect(wrong.result.status == 2, "\(wrongText)")
        #expect(wrongText.contains("the proxy 127.0.0.1:\(proxy.port) refused the credentials given for user 'alice'"), "\(wrongText)")
        #expect(!wrongText.contains("wrong-password"), "the password is never printed")
        try wrong.checkEveryRowExactlyOnce(rows: 150)
        #expect(try wrong.summary["aborted"] as? Int == 150)
        #expect(try wrong.records.allSatisfy { $0["reason"] as? String == "ProxyFailed" })

        let none = try send(proxy.url, "out-none")
        let noneText = none.result.stdout + none.result.stderr
        #expect(none.result.status == 2, "\(noneText)")
        #expect(noneText.contains("the proxy 127.0.0.1:\(proxy.port) wants credentials (\"HTTP/1.0 407 Proxy Authentication Required\")"),
                "\(noneText)")
        try none.checkEveryRowExactlyOnce(rows: 150)
        #expect(try none.summary["aborted"] as? Int == 150)
        mock.stop()
    }

    @Test func aProxyPortWithNothingListeningStopsTheRunWithExitTwo() throws {
        let rig = try SendCampaignTests.Rig(rows: 50)
        let mock = try MockServerProcess(scratch: rig.scratch, keyFile: rig.key)
        let nothing = try LoopbackPort.free()
        let out = rig.scratch.path("out")
        let started = Date()
        let result = try Binary.run(Self.arguments(rig, mock: mock, out: out) + ["--proxy", "http://127.0.0.1:\(nothing)"],
                                    environment: Self.environment())
        mock.stop()
        let run = CampaignRun(result: result, outDirectory: out)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stdout.contains("cannot connect to the proxy 127.0.0.1:\(nothing): Connection refused"), "\(result.stdout)")
        // Clock: the wall clock; slack: 30 s for a stop that takes well under one (the alternative waits 120 s).
        #expect(Date().timeIntervalSince(started) < 30, "stopped at once, not after --unreachable-timeout")
        try run.checkEveryRowExactlyOnce(rows: 50)
        #expect(try run.summary["aborted"] as? Int == 50)
        #expect(try mock.stats()["connections"] as? Int == 0)
        // The same from a job file's `proxy` key.
        let job = try rig.scratch.write("job.toml", "proxy = \"http://127.0.0.1:\(nothing)\"\n")
        let out2 = rig.scratch.path("out-job")
        let fromJob = try Binary.run(Self.arguments(rig, mock: mock, out: out2) + ["--config", job],
                                     environment: Self.environment())
        #expect(fromJob.status == 2, "\(fromJob.stderr)")
        #expect(fromJob.stdout.contains("cannot connect to the proxy 127.0.0.1:\(nothing)"), "\(fromJob.stdout)")
        try CampaignRun(result: fromJob, outDirectory: out2).checkEveryRowExactlyOnce(rows: 50)
    }

    @Test func aProxyThatRefusesThePortOrIsNoProxyIsNamedForWhatItAnswered() throws {
        let rig = try SendCampaignTests.Rig(rows: 20)
        let mock = try MockServerProcess(scratch: rig.scratch, keyFile: rig.key)
        // tinyproxy allows CONNECT to another port only: it answers 403.
        let proxy = try TinyproxyProcess(scratch: rig.scratch, connectPorts: [mock.port == 443 ? 444 : 443])
        let out = rig.scratch.path("out-403")
        let refused = try Binary.run(Self.arguments(rig, mock: mock, out: out) + ["--proxy", proxy.url],
                                     environment: Self.environment())
        proxy.stop()
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stdout.contains("refused the tunnel to 127.0.0.1:\(mock.port): \"HTTP/1.1 403"), "\(refused.stdout)")
        try CampaignRun(result: refused, outDirectory: out).checkEveryRowExactlyOnce(rows: 20)
        mock.stop()
        // An SSH server where the proxy should be: its banner is no HTTP answer.
        let banner = try BannerServer(banner: "SSH-2.0-OpenSSH_9.2\r\n")
        defer { banner.stop() }
        let out2 = rig.scratch.path("out-ssh")
        let notHTTP = try Binary.run(Self.arguments(rig, mock: mock, out: out2) + ["--proxy", "http://127.0.0.1:\(banner.port)"],
                                     environment: Self.environment())
        #expect(notHTTP.status == 2, "\(notHTTP.stderr)")
        #expect(notHTTP.stdout.contains("the proxy 127.0.0.1:\(banner.port) did not answer in HTTP: it sent \"SSH-2.0-OpenSSH_9.2\""),
                "\(notHTTP.stdout)")
        try CampaignRun(result: notHTTP, outDirectory: out2).checkEveryRowExactlyOnce(rows: 20)
    }

    @Test func theEmbeddedMockIsNeverProxied() throws {
        let rig = try SendCampaignTests.Rig(rows: 100)
        let nothing = try LoopbackPort.free()
        let out = rig.scratch.path("out")
        let result = try Binary.run(["send", "--input", rig.csv, "--endpoint", "mock", "--progress", "never", "--out", out],
                                    environment: Self.environment(["HTTPS_PROXY": "http://127.0.0.1:\(nothing)"]))
        let run = CampaignRun(result: result, outDirectory: out)
        #expect(result.status == 0, "\(result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 100)
        #expect(try run.summary["delivered"] as? Int == 100)
        // An explicit --proxy is not used either, and the run says so.
        let out2 = rig.scratch.path("out-flag")
        let flagged = try Binary.run(["send", "--input", rig.csv, "--endpoint", "mock", "--progress", "never", "--out", out2,
                                      "--proxy", "http://127.0.0.1:\(nothing)"], environment: Self.environment())
        #expect(flagged.status == 0, "\(flagged.stderr)")
        #expect(flagged.stderr.contains("--endpoint mock runs inside this process and is reached directly"), "\(flagged.stderr)")
        try CampaignRun(result: flagged, outDirectory: out2).checkEveryRowExactlyOnce(rows: 100)
    }

    @Test func aBadProxySettingStopsBeforeSendingWithExitOne() throws {
        let rig = try SendCampaignTests.Rig(rows: 5)
        let mock = try MockServerProcess(scratch: rig.scratch, keyFile: rig.key)
        defer { mock.stop() }
        let cases: [([String], [String: String], String)] = [
            (["--proxy", "https://alice:hunter2@proxy.example.com:3128"], [:], "--proxy https://alice:***@proxy.example.com:3128"),
            (["--proxy", "http://proxy.example.com"], [:], "the port is missing"),
            ([], ["HTTPS_PROXY": "socks5://alice:hunter2@proxy:1080"], "the environment variable HTTPS_PROXY"),
        ]
        for (index, (flags, environment, expected)) in cases.enumerated() {
            let out = rig.scratch.path("out-\(index)")
            let result = try Binary.run(Self.arguments(rig, mock: mock, out: out) + flags,
                                        environment: Self.environment(environment))
            #expect(result.status == 1, "\(flags) \(environment): \(result.stderr)")
            #expect(result.stderr.contains(expected), "\(result.stderr)")
            #expect(!result.stderr.contains("hunter2"), "the password is never printed")
            #expect(!FileManager.default.fileExists(atPath: out), "nothing was started")
        }
        #expect(try Self.mockConnections(mock) == 0)
    }

    private static func mockConnections(_ mock: MockServerProcess) throws -> Int {
        mock.stop()
        return try mock.stats()["connections"] as? Int ?? -1
    }
}
