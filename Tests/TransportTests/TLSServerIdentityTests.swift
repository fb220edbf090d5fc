import Foundation
import Testing
@testable import Transport

/// What a client says about a server that is not the TLS server it should be: a certificate that
/// names its host only in the CN, or a server that does not speak TLS at all. Both are
/// configuration errors, named for what they are.
@Suite(.serialized)
struct TLSServerIdentityTests {
    @Test func aCertificateWithoutSubjectAltNameIsRefusedEvenWhenItsCNMatches() throws {
        let directory = try TransportTempDirectory()
        let certificate = directory.file("cn-only.pem"), key = directory.file("cn-only.key")
        // A real OpenSSL-made self-signed certificate with CN=localhost and no subjectAltName.
        let status = try runOpenSSL(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
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
        let server = try PlainHTTPServer()
        defer { server.stop() }
        let client = try TLSContext.client()
        let outcome = try withRunningReactor { reactor in
            TLSClientRun.run(on: reactor, port: server.port, host: "127.0.0.1", context: client, payload: [1])
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

/// A plain HTTP/1.1 listener on 127.0.0.1, as a wrong --endpoint port finds: whatever a client sends
/// first, it answers 400 Bad Request and closes (as nginx does to a TLS ClientHello on a plain port).
final class PlainHTTPServer {
    let process = Process()
    let port: UInt16

    init() throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", "-c", Self.script]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // "Serving HTTP on 127.0.0.1 port 40123 ..."
        var text = ""
        var found: UInt16?
        let fd = out.fileHandleForReading.fileDescriptor
        var chunk = [UInt8](repeating: 0, count: 256)
        while found == nil {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            text += String(decoding: chunk[0..<count], as: UTF8.self)
            if let range = text.range(of: " port "), let end = text[range.upperBound...].firstIndex(of: " ") {
                found = UInt16(text[range.upperBound..<end])
            }
        }
        guard let found else {
            kill(process.processIdentifier, SIGKILL)
            throw PlainHTTPServerError.didNotStart(text)
        }
        port = found
    }

    private static let script = """
        import socket
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        print("Serving HTTP on 127.0.0.1 port %d ..." % server.getsockname()[1])
        while True:
            client, _ = server.accept()
            client.recv(65536)
            client.sendall(b"HTTP/1.1 400 Bad Request\\r\\nContent-Length: 0\\r\\nConnection: close\\r\\n\\r\\n")
            client.close()
        """

    /// SIGKILL: the test runner's threads block SIGTERM, and a child started from one inherits that.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit { stop() }
}

enum PlainHTTPServerError: Error { case didNotStart(String) }
