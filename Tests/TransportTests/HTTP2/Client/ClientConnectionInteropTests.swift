import Foundation
import Testing
import TestSupport
@testable import Transport

/// ClientConnection against nghttp2's own TLS server, nghttpd: an implementation we did not write.
/// nghttpd answers 404 for the APNs path; the protocol is what is tested.
@Suite(.serialized)
struct ClientConnectionInteropTests {
    @Test func requestsToNghttpdComeBackWithTheirTagsAndStatus() throws {
        let tls = try ConnectionTestTLS()
        let run = try withNghttpd(tls) { port in
            try runConnections(port: port, tls: tls.client, total: 2_000, maxStreams: 100)
        }
        let report = try #require(run, "the run against nghttpd did not finish")
        #expect(report.responseCount == 2_000)
        #expect(Set(report.responsesPerTag.keys) == Set(1...2_000))
        #expect(report.responsesPerTag.values.allSatisfy { $0 == 1 })
        #expect(report.statuses == [404: 2_000])
        #expect(report.slotsAtReady == [100])
        #expect(report.maxInFlight == 100)
        #expect(report.closeErrors.count == 1 && report.closeErrors[0] == nil, "\(report.closeErrors)")
    }

    /// The throughput of the client alone: nghttpd (C) serves, two connections × 100 streams.
    @Test func throughputAgainstNghttpd() throws {
        let tls = try ConnectionTestTLS()
        let run = try withNghttpd(tls) { port in
            try runConnections(port: port, tls: tls.client, connections: 2, total: 40_000, maxStreams: 100, timeout: 60)
        }
        let report = try #require(run)
        #expect(report.responseCount == 40_000)
        #expect(report.submissions == report.endings)
        print("ClientConnection vs nghttpd: 40000 requests in \(report.elapsedSeconds) s = "
              + "\(Int(40_000 / report.elapsedSeconds)) requests/s (2 connections × 100 streams, TLS)")
    }

    /// Starts `nghttpd` over TLS with a certificate from the test CA, waits for it to listen, runs
    /// `body`, and kills it.
    private func withNghttpd<Result>(_ tls: ConnectionTestTLS, _ body: (UInt16) throws -> Result) throws -> Result {
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path("docroot"), withIntermediateDirectories: true)
        try tls.authority.issueServerCertificate(hosts: ["127.0.0.1"])
            .writePEM(certificatePath: directory.path("cert.pem"), privateKeyPath: directory.path("key.pem"))
        let probe = try Socket.listen(on: .loopback())
        let port = try probe.localAddress().port
        probe.close()
        let server = try Command.start("/usr/sbin/nghttpd", ["-a", "127.0.0.1", "-d", directory.path("docroot"), String(port),
                                                             directory.path("key.pem"), directory.path("cert.pem")])
        // nghttpd does not exit on SIGTERM.
        defer { server.stop(signal: SIGKILL) }
        try #require(LoopbackPort.waitUntilListening(Int(port), timeout: 4), "nghttpd did not listen on \(port)")
        return try body(port)
    }
}
