import Foundation
import Testing
import TestSupport
@testable import Transport

/// What a client says about a server that is not the TLS server it should be: a certificate that
/// names its host only in the CN, or a server that does not speak TLS at all. Both are
/// configuration errors, named for what they are.
@Suite(.serialized)
struct TLSServerIdentityTests {
    @Test func aCertificateWithoutSubjectAltNameIsRefusedEvenWhenItsCNMatches() throws {
        let directory = try TemporaryDirectory()
        let certificate = directory.path("cn-only.pem"), key = directory.path("cn-only.key")
        // A real OpenSSL-made self-signed certificate with CN=localhost and no subjectAltName.
        let status = try OpenSSL.status(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                                     "-nodes", "-keyout", key, "-out", certificate, "-subj", "/CN=localhost",
                                     "-days", "2"])
        try #require(status == 0)
        let server = try TLSContext.server(identity: TLSIdentity.load(certificateFile: certificate, keyFile: key))
        let client = try TLSContext.client(additionalTrust: .caFile(certificate))
        let outcome = try withRunningReactor { reactor in
            let port = try TLSEchoServer.start(on: reactor, context: server, handshakes: TransportAwaited())
            return TLSClientRun.run(on: reactor, port: port, host: "localhost", context: client, payload: [1])
        }
        let error = try #require(outcome.tlsError)
        #expect(error == .noSubjectAltName(peer: "localhost"))
        #expect(error.description.contains("has no subjectAltName"))
        #expect(ClientConnectionError.tls(error).isConfigurationError)
    }

    @Test func aPlainHTTPServerIsNamedAsNotTLS() throws {
        let server = try PlainHTTPListener()
        defer { server.stop() }
        let client = try TLSContext.client()
        let outcome = try withRunningReactor { reactor in
            TLSClientRun.run(on: reactor, port: UInt16(server.port), host: "127.0.0.1", context: client, payload: [1])
        }
        let error = try #require(outcome.tlsError)
        #expect(error == .notTLS(peer: "127.0.0.1", answer: "in plain HTTP"))
        #expect(error.description.hasPrefix("127.0.0.1 answered in plain HTTP, not TLS"))
        #expect(ClientConnectionError.tls(error).isConfigurationError)
    }

    @Test func whatANonTLSServerAnsweredIsShownAsTextOrHex() {
        #expect(TLSFailure.notTLSAnswer(Array("HTTP/".utf8)) == "in plain HTTP")
        #expect(TLSFailure.notTLSAnswer(Array("+OK r".utf8)) == "with \"+OK r...\"")
        #expect(TLSFailure.notTLSAnswer([0x00, 0xff, 0x10, 0x41, 0x0a]) == "with bytes 00 ff 10 41 0a")
        #expect(TLSFailure.isNotTLS(Array("HTTP/".utf8)))
        #expect(!TLSFailure.isNotTLS([22, 3, 3, 0, 90]), "a handshake record")
        #expect(!TLSFailure.isNotTLS([21, 3, 1, 0, 2]), "an alert")
    }
}
