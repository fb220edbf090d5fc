import APNs
import Synchronization
import Transport

/// Channel management on a listener of its own (`--management-listen`), as Apple serves it from
/// hosts apart from the push hosts: an `H2Server` on its own reactor thread whose delegate serves
/// only `/1/apps/…` (404 BadPath for the rest), presenting a certificate of the push listener's
/// CA (or its files), with the same authentication, faults and record. The channels are the push
/// listener's (`MockChannelStore`). Sendable: its state lives on its reactor thread.
final class MockManagementListener: Sendable {
    private let server: H2Server<MockAPNsServerDelegate>
    /// The delegate's final counters, handed over by its reactor thread when the server stops.
    private let final: FinalStats

    var address: SocketAddress { server.address }

    static func start(address: SocketAddress, configuration: MockAPNsConfiguration, authority: CertificateAuthority?,
                      trust: TLSTrust?, recorder: MockAPNsRecorder?,
                      channels: MockChannelStore) throws(MockAPNsError) -> MockManagementListener {
        let identity: H2ServerIdentity
        switch configuration.identity {
        case .ephemeral(let hosts):
            guard let authority else { throw .server("the management listener: no CA to issue its certificate") }
            do {
                identity = .identity(try authority.issueServerCertificate(hosts: hosts.isEmpty ? ["127.0.0.1"] : hosts))
            } catch {
                throw .server("the management listener: \(error)")
            }
        case .pemFiles, .identity:
            identity = configuration.identity
        }
        let serverConfiguration = H2Server<MockAPNsServerDelegate>.Configuration(
            address: address, identity: identity, clientCertificateTrust: trust,
            session: .init(maxConcurrentStreams: configuration.startingMaxStreams, maxRequestBodyBytes: 16 * 1024),
            threadName: "mock-manage")
        let stats = FinalStats()
        let finished: @Sendable (MockAPNsStats, String?) -> Void = { final, _ in stats.value.withLock { $0 = final } }
        do {
            let server = try H2Server.start(serverConfiguration) {
                MockAPNsServerDelegate(configuration: configuration, recorder: recorder, channels: channels,
                                       role: .management, finished: finished)
            }
            return MockManagementListener(server: server, final: stats)
        } catch {
            throw .flag(name: "--management-listen", value: "\(address)", problem: error.description)
        }
    }

    private init(server: H2Server<MockAPNsServerDelegate>, final: FinalStats) {
        self.server = server
        self.final = final
    }

    func stats() -> MockAPNsStats {
        server.withDelegate { $0.snapshot() } ?? MockAPNsStats()
    }

    /// Stops the listener and returns its final counters.
    func stop() -> MockAPNsStats {
        server.stop()
        return final.value.withLock { $0 } ?? MockAPNsStats()
    }

    private final class FinalStats: Sendable {
        let value = Mutex<MockAPNsStats?>(nil)
    }
}
