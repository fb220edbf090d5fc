import APNs
import Foundation
import Transport

/// The mock's binary gateway and feedback service (issue 15), each a `TLSStreamServer` on its own
/// thread, presenting the HTTP/2 server's certificate (or one its ephemeral CA issues) and
/// requiring a client certificate from the mock's `--client-ca`, as Apple's did.
/// Sendable: the gateway's state lives on its server's thread and is reached through it.
public final class MockLegacyServers: Sendable {
    private let gatewayServer: TLSStreamServer?
    private let feedbackServer: TLSStreamServer?
    private let gateway: ThreadBound<MockLegacyGateway>
    private let recordPath: String?

    /// Where the binary gateway listens (nil when not asked for).
    public var binaryAddress: SocketAddress? { gatewayServer?.address }
    /// Where the feedback service listens (nil when not asked for).
    public var feedbackAddress: SocketAddress? { feedbackServer?.address }

    /// Starts what `legacy` asks for. `authority` is the HTTP/2 mock's ephemeral CA (nil when it
    /// presents a certificate from files, which these servers then present too).
    public static func start(_ legacy: MockLegacyConfiguration, mock: MockAPNsConfiguration,
                             authority: CertificateAuthority?) throws(MockAPNsError) -> MockLegacyServers {
        guard case .certificate(let clientTrust) = mock.authentication else {
            throw .flag(name: "--legacy-binary-listen/--feedback-listen", value: "",
                        problem: "Apple's binary gateway and feedback service authenticate by client certificate only: give --client-ca CA.pem too")
        }
        let context: TLSContext
        do {
            let identity: TLSIdentity
            switch mock.identity {
            case .pemFiles(let certificate, let key): identity = try TLSIdentity.load(certificateFile: certificate, keyFile: key)
            case .identity(let given): identity = given
            case .ephemeral(let hosts):
                guard let authority else { throw TLSError.openSSL(operation: "mock identity", detail: "no ephemeral CA") }
                identity = try authority.issueServerCertificate(hosts: hosts.isEmpty ? ["127.0.0.1"] : hosts)
            }
            context = try TLSContext.server(identity: identity, options: TLSServerOptions(
                alpnProtocols: [], clientCertificateTrust: clientTrust))
        } catch {
            throw .server("\(error)")
        }
        let gateway = ThreadBound(MockLegacyGateway(configuration: legacy, unregistered: mock.unregistered, seed: mock.seed))
        let tuples = Self.feedbackBytes(mock.unregistered, cut: legacy.feedbackCutBytes)
        do {
            let gatewayServer = try legacy.binaryAddress.map { address throws(SocketError) in
                try TLSStreamServer.start(address: address, context: context, threadName: "mock-binary") { stream in
                    gateway.value.serve(stream)
                }
            }
            let feedbackServer = try legacy.feedbackAddress.map { address throws(SocketError) in
                try TLSStreamServer.start(address: address, context: context, threadName: "mock-feedback") { stream in
                    stream.start(onBytes: { _ in }, onEnd: { _ in })
                    stream.queue(tuples)
                    stream.finish()
                }
            }
            return MockLegacyServers(gatewayServer: gatewayServer, feedbackServer: feedbackServer, gateway: gateway,
                                     recordPath: legacy.recordPath)
        } catch {
            throw .server(error.description)
        }
    }

    private init(gatewayServer: TLSStreamServer?, feedbackServer: TLSStreamServer?, gateway: ThreadBound<MockLegacyGateway>,
                 recordPath: String?) {
        self.gatewayServer = gatewayServer
        self.feedbackServer = feedbackServer
        self.gateway = gateway
        self.recordPath = recordPath
    }

    /// Every `--unregistered-file` token as a feedback tuple (its timestamp in seconds), in token
    /// order, less `cut` bytes at the end.
    static func feedbackBytes(_ unregistered: [String: Int64], cut: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for (token, milliseconds) in unregistered.sorted(by: { $0.key < $1.key }) {
            let digits = Array(token.utf8)
            guard digits.count % 2 == 0 else { continue }
            let raw = stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16) ?? 0 }
            FeedbackTuple(time: UInt32(clamping: milliseconds / 1000), token: raw).append(to: &bytes)
        }
        return Array(bytes.dropLast(min(cut, bytes.count)))
    }

    /// Stops both servers and writes `--binary-record-out`.
    public func stop() throws(MockAPNsError) {
        let gateway = self.gateway
        let text = gatewayServer?.onServerThread { gateway.value.recordText } ?? ""
        gatewayServer?.stop()
        feedbackServer?.stop()
        guard let recordPath else { return }
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: recordPath))
        } catch {
            throw .flag(name: "--binary-record-out", value: recordPath, problem: "cannot write it: \(error.localizedDescription)")
        }
    }
}
