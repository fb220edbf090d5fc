import Foundation
import Testing
import TestSupport
@testable import Transport

/// Real TLS between our server and our client on 127.0.0.1, driven by a Reactor.
@Suite(.serialized)
struct TLSHandshakeTests {
    let authority: CertificateAuthority
    let serverContext: TLSContext

    init() throws {
        authority = try CertificateAuthority()
        serverContext = try TLSContext.server(identity: authority.issueServerCertificate())
    }

    /// Big enough that writes go out in several partial SSL_writes and reads span many records.
    static let payload: [UInt8] = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }

    private func run(host: String = "127.0.0.1", client: TLSContext, server: TLSContext? = nil,
                     payload: [UInt8] = TLSHandshakeTests.payload) throws -> (ClientOutcome, ServerHandshake?) {
        try withRunningReactor { reactor in
            let handshakes = TransportAwaited<ServerHandshake>()
            let port = try TLSEchoServer.start(on: reactor, context: server ?? serverContext, handshakes: handshakes)
            let outcome = TLSClientRun.run(on: reactor, port: port, host: host, context: client, payload: payload)
            return (outcome, handshakes.wait(seconds: 2))
        }
    }

    @Test func handshakeNegotiatesH2AndEchoesBytesBothWays() throws {
        let client = try TLSContext.client(additionalTrust: .authority(authority))
        let (outcome, server) = try run(client: client)
        #expect(outcome == .echoed(alpn: "h2", version: "TLSv1.3", bytes: TLSHandshakeTests.payload))
        #expect(server == .completed(alpn: "h2", peerSubject: nil))
    }

    /// (Much smaller kernel buffers only make TCP's delayed ACKs the bottleneck.)
    @Test func bigBatchThroughSmallSocketBuffersResumesAfterWouldBlock() throws {
        let client = try TLSContext.client(additionalTrust: .authority(authority))
        let payload = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 13) }
        let blocked = Shared(0)
        let outcome = try withRunningReactor { reactor in
            let handshakes = TransportAwaited<ServerHandshake>()
            let port = try TLSEchoServer.start(on: reactor, context: serverContext, handshakes: handshakes)
            return TLSClientRun.run(on: reactor, port: port, host: "127.0.0.1", context: client, payload: payload,
                                    socketBufferSize: 32_768, blockedFlushes: blocked)
        }
        guard case let .echoed(alpn, _, bytes) = outcome else {
            Issue.record("no echo: \(outcome)")
            return
        }
        #expect(alpn == "h2")
        #expect(bytes.count == payload.count)
        #expect(bytes == payload, "the echo differs from what was sent")
        #expect(blocked.withLock { $0 } > 0)
    }

    @Test func clientVerifiesAHostNameAgainstACAFileOnDisk() throws {
        let directory = try TemporaryDirectory()
        try authority.writeCertificate(to: directory.path("ca.pem"))
        let client = try TLSContext.client(additionalTrust: .caFile(directory.path("ca.pem")))
        let (outcome, _) = try run(host: "localhost", client: client, payload: Array("hello".utf8))
        #expect(outcome == .echoed(alpn: "h2", version: "TLSv1.3", bytes: Array("hello".utf8)))
    }

    @Test func serverLoadsItsCertificateAndKeyFromPEMFiles() throws {
        let directory = try TemporaryDirectory()
        try authority.issueServerCertificate().writePEM(certificatePath: directory.path("server.pem"),
                                                        privateKeyPath: directory.path("server.key"))
        let server = try TLSContext.server(identity: TLSIdentity.load(certificateFile: directory.path("server.pem"),
                                                                      keyFile: directory.path("server.key")))
        let client = try TLSContext.client(additionalTrust: .authority(authority))
        let (outcome, _) = try run(client: client, server: server, payload: Array("files".utf8))
        #expect(outcome == .echoed(alpn: "h2", version: "TLSv1.3", bytes: Array("files".utf8)))
    }

    @Test func serverFromAnotherCAFailsVerificationWithTheReason() throws {
        let stranger = try CertificateAuthority(commonName: "some other CA")
        let client = try TLSContext.client(additionalTrust: .authority(stranger))
        let (outcome, _) = try run(client: client)
        #expect(outcome.tlsError == .certificateVerificationFailed(
            peer: "127.0.0.1", reason: "unable to get local issuer certificate"))
        #expect(outcome.tlsError?.description.contains("--ca-file") == true)
    }

    @Test func certificateForAnotherNameIsAHostnameMismatch() throws {
        let client = try TLSContext.client(additionalTrust: .authority(authority))
        let (outcome, _) = try run(host: "push.example.com", client: client)
        #expect(outcome.tlsError == .hostnameMismatch(peer: "push.example.com"))
    }

    @Test func certificateWithoutTheIPAddressIsAHostnameMismatch() throws {
        let server = try TLSContext.server(identity: authority.issueServerCertificate(hosts: ["localhost"]))
        let client = try TLSContext.client(additionalTrust: .authority(authority))
        let (outcome, _) = try run(host: "127.0.0.1", client: client, server: server)
        #expect(outcome.tlsError == .hostnameMismatch(peer: "127.0.0.1"))
    }

    @Test func serverSpeakingOnlyTLS11IsRefused() throws {
        let server = try TLSContext.server(identity: authority.issueServerCertificate(),
                                           options: TLSServerOptions(onlyTLS11ForTesting: true))
        let client = try TLSContext.client(additionalTrust: .authority(authority))
        let (outcome, _) = try run(client: client, server: server)
        guard case .protocolVersionRefused(peer: "127.0.0.1", _) = try #require(outcome.tlsError) else {
            Issue.record("expected the TLS version to be refused, got \(outcome)")
            return
        }
        #expect(outcome.tlsError?.description.contains("older than 1.2") == true)
    }

    /// Without security level 0 the 1.1 server could not handshake at all, and the test above
    /// would pass for the wrong reason: check with openssl that it really speaks TLS 1.1.
    @Test func theTLS11TestServerReallySpeaksTLS11() throws {
        let server = try TLSContext.server(identity: authority.issueServerCertificate(),
                                           options: TLSServerOptions(onlyTLS11ForTesting: true))
        try withRunningReactor { reactor in
            let handshakes = TransportAwaited<ServerHandshake>()
            let port = try TLSEchoServer.start(on: reactor, context: server, handshakes: handshakes)
            let output = try openSSLClient(port: port, extra: ["-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0"])
            #expect(output.contains("TLSv1.1"))
            #expect(handshakes.wait() == .completed(alpn: nil, peerSubject: nil))
        }
    }

    @Test func serverThatDoesNotSelectH2FailsWithTheALPNError() throws {
        let server = try TLSContext.server(identity: authority.issueServerCertificate(),
                                           options: TLSServerOptions(alpnProtocols: ["http/1.1"]))
        let client = try TLSContext.client(additionalTrust: .authority(authority))
        let (outcome, _) = try run(client: client, server: server)
        #expect(outcome.tlsError == .alpnNotNegotiated(peer: "127.0.0.1"))
        #expect(outcome.tlsError?.description.contains("server did not negotiate HTTP/2 (ALPN h2)") == true)
    }

    @Test func serverProceedsWhenTheClientOffersNoALPN() throws {
        try withRunningReactor { reactor in
            let handshakes = TransportAwaited<ServerHandshake>()
            let port = try TLSEchoServer.start(on: reactor, context: serverContext, handshakes: handshakes)
            _ = try openSSLClient(port: port, extra: [])
            #expect(handshakes.wait() == .completed(alpn: nil, peerSubject: nil))
        }
    }

    @Test func silentServerEndsInAHandshakeTimeout() throws {
        try withRunningReactor { reactor in
            // The kernel completes the TCP handshake for a listener nobody accepts from.
            let silent = try Socket.listen(on: .loopback())
            let port = try silent.localAddress().port
            let outcome = TransportAwaited<Result<Void, TLSError>>()
            let client = try TLSContext.client(additionalTrust: .authority(authority))
            reactor.execute {
                Socket.connect(to: .loopback(port: port), timeout: .seconds(5), on: reactor) { result in
                    guard case let .success(socket) = result,
                          let session = try? TLSSession(client: client, socket: socket, host: "127.0.0.1") else {
                        return outcome.fulfil(.failure(.handshakeFailed(peer: "", detail: "no connection")))
                    }
                    session.startHandshake(on: reactor, timeout: .milliseconds(200)) { outcome.fulfil($0) }
                }
            }
            let result = try #require(outcome.wait())
            #expect(throws: TLSError.handshakeTimedOut(peer: "127.0.0.1", timeout: .milliseconds(200))) {
                try result.get()
            }
            silent.close()
        }
    }
}

/// `openssl s_client` against 127.0.0.1:port with stdin closed; returns what it printed.
func openSSLClient(port: UInt16, extra: [String]) throws -> String {
    let result = try Command.tool("openssl", ["s_client", "-connect", "127.0.0.1:\(port)", "-brief"] + extra,
                                  standardInput: FileHandle.nullDevice)
    return result.stdout + result.stderr
}
