import Testing
@testable import Transport

/// A proxy that accepts the TCP connection and never answers CONNECT must not hold a connection
/// forever: `connectTimeout` bounds the proxy's answer too.
@Suite struct ProxyTunnelTimeoutTests {
    @Test func aProxyThatNeverAnswersConnectTimesOutAsAProxyError() throws {
        let tls = try ConnectionTestTLS()
        // Listening, never accepting: the kernel completes the TCP handshake, nobody answers.
        let silent = try Socket.listen(on: .loopback())
        defer { silent.close() }
        let proxyPort = try silent.localAddress().port
        let run = try #require(try runConnections(port: 2197, tls: tls.client, total: 1, timeout: 10) { configuration in
            configuration.proxy = HTTPProxy(endpoint: Endpoint(host: "127.0.0.1", port: proxyPort))
            configuration.address = .loopback(port: proxyPort)
            configuration.connectTimeout = .milliseconds(300)
        })
        let error = try #require(run.closeErrors.first.flatMap { $0 })
        #expect(error == .proxy(.timedOut(proxy: "127.0.0.1:\(proxyPort)", timeout: .milliseconds(300))))
        #expect(error.isConfigurationError && error.isProxyError)
        #expect(run.peerName == "127.0.0.1:2197 via the proxy 127.0.0.1:\(proxyPort)")
        // Clock: the run's own; slack: 5 s for a 300 ms connect timeout (a hang would reach the 10 s limit).
        #expect(run.elapsedSeconds < 5)
    }
}
