import APNs
import Synchronization
import Transport

/// An APNs emulator running in this process on its own reactor thread: `start` it, point a client
/// at `address` (trusting `certificateAuthority` / `caCertificatePEM` unless you gave your own
/// certificate), read `stats()`, and `stop()` it. `apns-bulk mock-server` and `send --endpoint mock`
/// both use it. Sendable: its state lives on the reactor thread and is reached through it.
public final class MockAPNsServer: Sendable {
    /// What the server was started with.
    public let configuration: MockAPNsConfiguration
    private let server: H2Server<MockAPNsServerDelegate>
    private let finalStats = Mutex<MockAPNsStats?>(nil)

    /// Starts listening; writes the ephemeral CA to `caOutPath` when set, and opens `recordOutPath`.
    public static func start(_ configuration: MockAPNsConfiguration) throws(MockAPNsError) -> MockAPNsServer {
        var configuration = configuration
        if configuration.startedAtMilliseconds == 0 { configuration.startedAtMilliseconds = unixMilliseconds() }
        let recorder = try configuration.recordOutPath.map { path throws(MockAPNsError) in try MockAPNsRecorder(path: path) }
        let channels = MockChannelStore(limit: configuration.maxChannelsPerApp)
        let role: MockListenerRole = configuration.managementAddress == nil ? .all : .pushes
        var trust: TLSTrust?
        if case .certificate(let clientTrust) = configuration.authentication { trust = clientTrust }
        let serverConfiguration = H2Server<MockAPNsServerDelegate>.Configuration(
            address: configuration.address, identity: configuration.identity, clientCertificateTrust: trust,
            session: .init(maxConcurrentStreams: configuration.startingMaxStreams, maxRequestBodyBytes: 16 * 1024),
            threadName: "mock-apns")
        let frozen = configuration
        let outcome = StopOutcome()
        let server: H2Server<MockAPNsServerDelegate>
        do {
            server = try H2Server.start(serverConfiguration) {
                MockAPNsServerDelegate(configuration: frozen, recorder: recorder, channels: channels, role: role) { stats, failure in
                    outcome.withLock { $0 = (stats, failure) }
                }
            }
        } catch {
            throw .server("\(error)")
        }
        if let path = configuration.caOutPath {
            guard let authority = server.certificateAuthority else {
                server.stop()
                throw .flag(name: "--ca-out", value: path, problem: "only an ephemeral certificate has a CA to write; drop --ca-out with --tls-cert")
            }
            do {
                try authority.writeCertificate(to: path)
            } catch {
                server.stop()
                throw .flag(name: "--ca-out", value: path, problem: error.description)
            }
        }
        var management: MockManagementListener?
        do throws(MockAPNsError) {
            if let address = configuration.managementAddress {
                management = try MockManagementListener.start(address: address, configuration: frozen,
                                                              authority: server.certificateAuthority, trust: trust,
                                                              recorder: recorder, channels: channels)
            }
        } catch {
            server.stop()
            throw error
        }
        return MockAPNsServer(configuration: configuration, server: server, outcome: outcome, management: management,
                              channelStore: channels)
    }

    private let outcome: StopOutcome
    private let management: MockManagementListener?
    private let channelStore: MockChannelStore

    private init(configuration: MockAPNsConfiguration, server: H2Server<MockAPNsServerDelegate>, outcome: StopOutcome,
                 management: MockManagementListener?, channelStore: MockChannelStore) {
        self.configuration = configuration
        self.server = server
        self.outcome = outcome
        self.management = management
        self.channelStore = channelStore
    }

    /// Where channel management listens when it has a listener of its own (`managementAddress`);
    /// nil when `address` serves it too.
    public var managementAddress: SocketAddress? { management?.address }

    /// The channel ids of app `bundleID` now, in creation order.
    public func channels(of bundleID: String) -> [String] { channelStore.channels(of: bundleID) }

    /// The address listened on, with the port picked for port 0.
    public var address: SocketAddress { server.address }
    /// The port listened on (the one picked, for port 0).
    public var port: UInt16 { server.address.port }
    /// The ephemeral CA clients must trust (nil with a certificate from files).
    public var certificateAuthority: CertificateAuthority? { server.certificateAuthority }
    /// The ephemeral CA's certificate as PEM, for a client in another process (nil with files).
    public var caCertificatePEM: String? { server.certificateAuthority?.certificatePEM }
    /// Connections open now.
    public var connectionsOpen: Int { server.connectionsOpen }

    /// The counters so far (after `stop()`, the final ones).
    public func stats() -> MockAPNsStats {
        if let done = finalStats.withLock({ $0 }) { return done }
        var stats = server.withDelegate { $0.snapshot() } ?? finalStats.withLock { $0 } ?? MockAPNsStats()
        if let management { stats.add(management.stats()) }
        return stats
    }

    /// Stops the server (GOAWAY to every connection), closes the record file, writes the stats file
    /// when configured, and returns the final counters. Later calls return them again.
    @discardableResult
    public func stop() throws(MockAPNsError) -> MockAPNsStats {
        if let done = finalStats.withLock({ $0 }) { return done }
        // The management listener first: the push listener closes the record both write.
        let managementStats = management?.stop()
        server.stop()
        let (final, recordFailure) = outcome.withLock { $0 } ?? (MockAPNsStats(), nil)
        var stats = final
        if let managementStats { stats.add(managementStats) }
        finalStats.withLock { $0 = stats }
        if let failure = recordFailure {
            throw .flag(name: "--record-out", value: configuration.recordOutPath ?? "", problem: failure)
        }
        if let path = configuration.statsOutPath { try stats.write(to: path) }
        return stats
    }
}

/// The final counters and any record-file failure, handed over by the reactor thread at stop.
private final class StopOutcome: Sendable {
    private let state = Mutex<(MockAPNsStats, String?)?>(nil)
    func withLock<R>(_ body: (inout (MockAPNsStats, String?)?) -> R) -> R { state.withLock { body(&$0) } }
}
