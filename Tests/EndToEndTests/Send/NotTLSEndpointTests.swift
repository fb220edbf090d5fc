import Foundation
import Testing
import TestSupport

/// An --endpoint whose port answers plain HTTP (a wrong port, a proxy's admin page): a TLS failure
/// reported within seconds with what came back, not minutes of retries ending "Unreachable".
@Suite(.serialized) struct NotTLSEndpointTests {
    @Test func aPlainHTTPServerStopsTheRunWithExitTwoWithinSeconds() throws {
        let rig = try SendCampaignTests.Rig(rows: 200)
        let server = try PlainHTTPListener()
        defer { server.stop() }
        let out = rig.scratch.path("out-plain")
        let arguments = rig.sendArguments(endpoint: "127.0.0.1:\(server.port)", caFile: "/dev/null", input: rig.csv,
                                          out: out).filter { $0 != "--ca-file" && $0 != "/dev/null" }
        let started = Date()
        let run = CampaignRun(result: try Binary.run(arguments), outDirectory: out)
        let seconds = Date().timeIntervalSince(started)
        #expect(run.result.status == 2, "\(run.result.stderr)")
        #expect((run.result.stdout + run.result.stderr).contains("127.0.0.1 answered in plain HTTP, not TLS"), "\(run.result.stderr)")
        #expect(seconds < 10, "reported within seconds, not after --unreachable-timeout")
        try run.checkEveryRowExactlyOnce(rows: 200)
        let reasons = Set(try run.records.compactMap { $0["reason"] as? String })
        #expect(reasons == ["TLSFailed"], "\(reasons)")
    }

    /// OpenSSL's own s_server offering only http/1.1 answers our ALPN h2 with alert 120
    /// (no_application_protocol): a TLS failure of the endpoint, not minutes of "Unreachable".
    @Test func aServerThatRefusesALPNh2StopsTheRunWithExitTwoAtOnce() throws {
        let rig = try SendCampaignTests.Rig(rows: 100)
        let certificate = rig.scratch.path("alpn.pem"), key = rig.scratch.path("alpn.key")
        try OpenSSL.run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
                         "-out", certificate, "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "2"])
        let out = Pipe()
        let server = try Command.start("/usr/bin/openssl", ["s_server", "-accept", "127.0.0.1:0", "-cert", certificate,
                                                            "-key", key, "-alpn", "http/1.1", "-www"], standardOutput: out)
        defer { server.stop(signal: SIGKILL) }
        let text = LoopbackPort.readAnnouncement(out) { $0.contains("ACCEPT") && $0.hasSuffix("\n") }
        let port = try #require(LoopbackPort.announced("ACCEPT", in: text))
        let output = rig.scratch.path("out-alpn")
        let started = Date()
        let run = CampaignRun(result: try Binary.run(rig.sendArguments(endpoint: "127.0.0.1:\(port)", caFile: certificate,
                                                                       input: rig.csv, out: output)),
                              outDirectory: output)
        #expect(run.result.status == 2, "\(run.result.stderr)")
        #expect((run.result.stdout + run.result.stderr).contains("did not negotiate HTTP/2 (ALPN h2)"), "\(run.result.stderr)")
        // Clock: the wall clock; slack: 10 s for a stop of well under one (waiting would take --unreachable-timeout).
        #expect(Date().timeIntervalSince(started) < 10)
        try run.checkEveryRowExactlyOnce(rows: 100)
    }

    @Test func aPlainHTTPEndpointBesideAWorkingOneIsDroppedWithAWarning() throws {
        let rig = try SendCampaignTests.Rig(rows: 2_000)
        let server = try PlainHTTPListener()
        defer { server.stop() }
        let mock = try rig.mock()
        let out = rig.scratch.path("out-plain-beside")
        let arguments = rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: rig.csv, out: out)
            + ["--endpoint", "127.0.0.1:\(server.port)", "--connections", "4"]
        let run = CampaignRun(result: try Binary.run(arguments), outDirectory: out)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        #expect(run.result.stderr.contains("warning: dropped endpoint 127.0.0.1:\(server.port)"), "\(run.result.stderr)")
        #expect(run.result.stderr.components(separatedBy: "dropped endpoint").count == 2, "warned once")
        try run.checkEveryRowExactlyOnce(rows: 2_000)
        #expect(try run.summary["delivered"] as? Int == 2_000)
    }
}
