import Foundation
import Testing
import TestSupport
@testable import Transport

/// Client certificates (APNs certificate authentication) end to end against a server that
/// requires one from our CA.
@Suite(.serialized)
struct TLSClientCertificateTests {
    let authority: CertificateAuthority
    let directory: TemporaryDirectory
    let serverContext: TLSContext
    static let subject = "/UID=com.example.app/CN=Apple Push Services: com.example.app"

    init() throws {
        authority = try CertificateAuthority()
        directory = try TemporaryDirectory()
        try authority.writeCertificate(to: directory.path("ca.pem"))
        serverContext = try TLSContext.server(
            identity: authority.issueServerCertificate(),
            options: TLSServerOptions(clientCertificateTrust: .caFile(directory.path("ca.pem"))))
        let client = try authority.issueClientCertificate(commonName: "Apple Push Services: com.example.app",
                                                          userID: "com.example.app")
        try client.writePEM(certificatePath: directory.path("client.pem"), privateKeyPath: directory.path("client.key"))
    }

    private func connect(with credentials: ClientCredentials?) throws -> (ClientOutcome, ServerHandshake?) {
        let identity = try credentials?.load()
        let client = try TLSContext.client(additionalTrust: .authority(authority), identity: identity)
        return try withRunningReactor { reactor in
            let handshakes = TransportAwaited<ServerHandshake>()
            let port = try TLSEchoServer.start(on: reactor, context: serverContext, handshakes: handshakes)
            let outcome = TLSClientRun.run(on: reactor, port: port, host: "localhost", context: client,
                                           payload: Array("ping".utf8))
            return (outcome, handshakes.wait(seconds: 2))
        }
    }

    private func exportP12(_ name: String, password: String, pbe: String) throws -> String {
        let path = directory.path(name)
        let status = try OpenSSL.status(["pkcs12", "-export", "-legacy", "-certpbe", pbe, "-keypbe", pbe,
                                     "-in", directory.path("client.pem"), "-inkey", directory.path("client.key"),
                                     "-out", path, "-passout", "pass:\(password)"])
        try #require(status == 0)
        return path
    }

    @Test func pemPairAuthenticatesAndTheServerSeesTheSubject() throws {
        let (outcome, server) = try connect(with: .pem(certificateFile: directory.path("client.pem"),
                                                      keyFile: directory.path("client.key")))
        #expect(outcome == .echoed(alpn: "h2", version: "TLSv1.3", bytes: Array("ping".utf8)))
        #expect(server == .completed(alpn: "h2", peerSubject: TLSClientCertificateTests.subject))
    }

    @Test(arguments: ["PBE-SHA1-3DES", "PBE-SHA1-RC2-40"])
    func legacyEncryptedP12Authenticates(pbe: String) throws {
        let path = try exportP12("client-\(pbe).p12", password: "s3cret pass", pbe: pbe)
        let (outcome, server) = try connect(with: .pkcs12(file: path, password: "s3cret pass"))
        #expect(outcome == .echoed(alpn: "h2", version: "TLSv1.3", bytes: Array("ping".utf8)))
        #expect(server == .completed(alpn: "h2", peerSubject: TLSClientCertificateTests.subject))
    }

    @Test func p12WithAnEmptyPasswordLoads() throws {
        let path = try exportP12("empty.p12", password: "", pbe: "PBE-SHA1-3DES")
        let identity = try ClientCredentials.pkcs12(file: path, password: "").load()
        #expect(identity.subject == TLSClientCertificateTests.subject)
    }

    @Test func wrongP12PasswordIsReportedAsSuch() throws {
        let path = try exportP12("client.p12", password: "right", pbe: "PBE-SHA1-3DES")
        #expect(throws: TLSError.pkcs12WrongPassword(path: path)) {
            try ClientCredentials.pkcs12(file: path, password: "wrong").load()
        }
    }

    @Test func missingClientCertificateIsRefusedByTheServer() throws {
        let (outcome, server) = try connect(with: nil)
        #expect(server == .failed(.clientCertificateMissing(peer: "test client")))
        guard case .clientCertificateRejected(peer: "localhost", _) = try #require(outcome.tlsError) else {
            Issue.record("expected the client to hear that its certificate was refused, got \(outcome)")
            return
        }
    }

    @Test func certificateFromAnotherCAIsRefusedByTheServer() throws {
        let stranger = try CertificateAuthority(commonName: "stranger CA")
        let identity = try stranger.issueClientCertificate(commonName: "intruder")
        try identity.writePEM(certificatePath: directory.path("x.pem"), privateKeyPath: directory.path("x.key"))
        let (outcome, server) = try connect(with: .pem(certificateFile: directory.path("x.pem"),
                                                      keyFile: directory.path("x.key")))
        #expect(server == .failed(.certificateVerificationFailed(
            peer: "client test client", reason: "unable to get local issuer certificate")))
        #expect(outcome.tlsError.map { if case .clientCertificateRejected = $0 { true } else { false } } == true)
    }
}

/// Loading certificate and key files: errors name the file and the fix.
struct TLSCredentialFileTests {
    @Test func missingFileIsNamed() {
        #expect(throws: TLSError.unusableFile(path: "/nonexistent/c.pem",
                                              reason: "cannot open: No such file or directory")) {
            try ClientCredentials.pem(certificateFile: "/nonexistent/c.pem", keyFile: "/nonexistent/k.pem").load()
        }
    }

    @Test func keyOfAnotherCertificateIsAMismatch() throws {
        let directory = try TemporaryDirectory()
        let authority = try CertificateAuthority()
        let first = try authority.issueClientCertificate(commonName: "first")
        let second = try authority.issueClientCertificate(commonName: "second")
        try first.writePEM(certificatePath: directory.path("a.pem"), privateKeyPath: directory.path("a.key"))
        try second.writePEM(certificatePath: directory.path("b.pem"), privateKeyPath: directory.path("b.key"))
        #expect(throws: TLSError.certificateKeyMismatch(certificatePath: directory.path("a.pem"),
                                                        keyPath: directory.path("b.key"))) {
            try TLSIdentity.load(certificateFile: directory.path("a.pem"), keyFile: directory.path("b.key"))
        }
    }

    @Test func textThatIsNotACertificateIsRefused() throws {
        let directory = try TemporaryDirectory()
        try "not a certificate\n".write(toFile: directory.path("c.pem"), atomically: true, encoding: .utf8)
        #expect(throws: TLSError.self) {
            try TLSIdentity.load(certificateFile: directory.path("c.pem"), keyFile: directory.path("c.pem"))
        }
        #expect(throws: TLSError.unusableFile(path: directory.path("c.pem"), reason: "not a PKCS#12 (.p12) file")) {
            try TLSIdentity.load(pkcs12File: directory.path("c.pem"), password: "")
        }
    }

    @Test func issuedServerCertificateVerifiesWithOpenSSL() throws {
        let directory = try TemporaryDirectory()
        let authority = try CertificateAuthority()
        try authority.writeCertificate(to: directory.path("ca.pem"))
        let server = try authority.issueServerCertificate()
        try server.writePEM(certificatePath: directory.path("s.pem"), privateKeyPath: directory.path("s.key"))
        #expect(try OpenSSL.status(["verify", "-CAfile", directory.path("ca.pem"), "-purpose", "sslserver",
                                "-verify_ip", "127.0.0.1", directory.path("s.pem")]) == 0)
        #expect(try OpenSSL.status(["verify", "-CAfile", directory.path("ca.pem"),
                                "-verify_hostname", "example.org", directory.path("s.pem")]) != 0)
        let mode = try FileManager.default.attributesOfItem(atPath: directory.path("s.key"))[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}
