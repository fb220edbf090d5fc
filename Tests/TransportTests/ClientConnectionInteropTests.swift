import Foundation
import Testing
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
        let directory = try TransportTempDirectory()
        try FileManager.default.createDirectory(atPath: directory.file("docroot"), withIntermediateDirectories: true)
        try tls.authority.issueServerCertificate(hosts: ["127.0.0.1"])
            .writePEM(certificatePath: directory.file("cert.pem"), privateKeyPath: directory.file("key.pem"))
        let probe = try Socket.listen(on: .loopback())
        let port = try probe.localAddress().port
        probe.close()
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/sbin/nghttpd")
        server.arguments = ["-a", "127.0.0.1", "-d", directory.file("docroot"), String(port),
                            directory.file("key.pem"), directory.file("cert.pem")]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        // nghttpd does not exit on SIGTERM.
        defer {
            if server.isRunning { kill(server.processIdentifier, SIGKILL) }
            server.waitUntilExit()
        }
        try #require(waitForListener(port: port), "nghttpd did not listen on \(port)")
        return try body(port)
    }

    private func waitForListener(port: UInt16) -> Bool {
        for _ in 0..<200 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            close(fd)
            if connected == 0 { return true }
            usleep(20_000)
        }
        return false
    }
}
