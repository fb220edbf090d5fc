import APNs
import Transport

/// One reactor thread's share of the campaign's `--connections`: which endpoint and address each
/// connection serves, opening it (a fresh DNS resolution each time), and reopening it after the
/// reconnect schedule's wait when it ends. What flows over the connections is the `Worker`'s
/// business; the pool tells it which connection is ready and which one a row came back on.
///
/// Everything here runs on `reactor`'s thread.
final class ConnectionPool {
    private let reactor: Reactor
    private let shared: CampaignShared
    /// Whose connections these are: their TLS context (a certificate's) and stream-slot rule.
    private let group: CredentialGroup
    /// Every connection of this pool reports to it: the worker that owns the pool.
    private weak var delegate: (any ClientConnectionDelegate)?
    @exclusivity(unchecked) private(set) var slots: [ConnectionSlot] = []
    /// No connection is opened or reopened any more.
    private var closing = false
    /// Every row is recorded: a connection that ends now says nothing about its endpoint.
    private var shutDown = false

    init(reactor: Reactor, shared: CampaignShared, group: CredentialGroup) {
        self.reactor = reactor
        self.shared = shared
        self.group = group
    }

    /// Connection i goes to endpoint i mod E and, within it, to its (i div E)-th address, so the
    /// campaign spreads across every endpoint and every address each name resolves to; the
    /// connections are dealt to the `threads` reactor threads in turn.
    static func assignments(connections: Int, endpoints endpointCount: Int, threads: Int) -> [[ConnectionSlot]] {
        var assignments = Array(repeating: [ConnectionSlot](), count: threads)
        for index in 0..<connections {
            let slot = ConnectionSlot(id: index, endpointIndex: index % endpointCount, addressIndex: index / endpointCount)
            assignments[index % threads].append(slot)
        }
        return assignments
    }

    /// Opens every slot's connection; their events go to `delegate`.
    func start(slots assigned: [ConnectionSlot], delegate: any ClientConnectionDelegate) {
        group.opened.store(true, ordering: .relaxed)
        slots = assigned
        self.delegate = delegate
        let configuration = shared.configuration
        for slot in slots {
            slot.reconnects = ReconnectSchedule(for: configuration, slot: slot.id)
            connect(slot)
        }
    }

    /// The run is ending: open nothing more, and forget the reconnects already scheduled.
    func stopReconnecting() {
        closing = true
        for slot in slots {
            if let timer = slot.reconnectTimer { reactor.cancel(timer) }
            slot.reconnectTimer = nil
        }
    }

    /// Every row is recorded: say goodbye (GOAWAY) on every connection; nothing is in flight.
    func shutdown() {
        shutDown = true
        closing = true
        closeAll(abort: false)
    }

    /// Says goodbye (GOAWAY) on every open connection, or with `abort` drops them (their rows in
    /// flight come back to the delegate as lost before this returns).
    func closeAll(abort: Bool) {
        for slot in slots {
            guard let connection = slot.connection else { continue }
            if abort { connection.abort() } else { connection.close() }
        }
    }

    // MARK: - Which slot a connection is

    /// The slot whose current connection this is; nil for a connection already closed and replaced.
    func slot(for connection: ClientConnection) -> ConnectionSlot? {
        slotIndex(for: connection).map { slots[$0] }
    }

    /// The index in `slots` of `slot(for: connection)`: for a caller that reads a field or two,
    /// without the retain and release of a slot handed back.
    @inline(__always)
    func slotIndex(for connection: ClientConnection) -> Int? {
        let tag = connection.ownerTag
        guard tag >= 0, tag < slots.count, slots[tag].connection === connection else { return nil }
        return tag
    }

    /// Whether a connection other than `slot`'s can take work now.
    func hasReadySlot(besides slot: ConnectionSlot) -> Bool {
        slots.contains { $0 !== slot && $0.isReady }
    }

    // MARK: - A connection's life

    /// `connection` got the server's SETTINGS; returns its slot (nil for a stale connection).
    func connectionBecameReady(_ connection: ClientConnection) -> ConnectionSlot? {
        guard let slot = slot(for: connection) else { return nil }
        slot.isReady = true
        shared.noteConnectionReady(endpointIndex: slot.endpointIndex)
        group.readyConnections.add(1, ordering: .relaxed)
        return slot
    }

    /// `connection` ended: unless the pool is closing or the endpoint is dropped (a configuration
    /// error on an endpoint that never worked), its slot reconnects after the schedule's wait: at
    /// once after an orderly end, with backoff over consecutive failures otherwise, so a flapping
    /// endpoint is never hammered.
    func connectionClosed(_ connection: ClientConnection, error: ClientConnectionError?) {
        guard let slot = slot(for: connection) else { return }
        if slot.isReady {
            shared.noteConnectionDown()
            group.readyConnections.subtract(1, ordering: .relaxed)
        }
        slot.isReady = false
        slot.connection = nil
        if shutDown { return }
        let delay = slot.reconnects.connectionEnded(connection)
        if let error, connection.readyAt == nil {
            shared.noteConnectFailure(endpointIndex: slot.endpointIndex,
                                      EndpointFailure(error, endpoint: shared.configuration.endpoints[slot.endpointIndex]))
        }
        if let error, shared.noteConnectionFailure(endpointIndex: slot.endpointIndex, detail: error.description,
                                                   configurationError: error.isConfigurationError,
                                                   proxy: error.isProxyError) {
            return
        }
        scheduleReconnect(slot, after: delay)
    }

    /// `connection` is done although it works (APNs refused its provider-token update): it ends
    /// gracefully while its answers come in, and its slot opens a fresh connection at once, which
    /// starts with the current token. Nothing for a connection already replaced.
    func replace(_ connection: ClientConnection) {
        guard let slot = slot(for: connection) else { return }
        if slot.isReady {
            shared.noteConnectionDown()
            group.readyConnections.subtract(1, ordering: .relaxed)
        }
        slot.isReady = false
        slot.connection = nil
        connection.close()
        connect(slot)
    }

    /// The endpoint a connection of this pool serves, also once it has been replaced (its slot
    /// keeps the endpoint).
    func endpointLabel(of connection: ClientConnection) -> String? {
        let tag = connection.ownerTag
        return tag >= 0 && tag < slots.count ? slots[tag].endpointLabel : nil
    }

    private func connect(_ slot: ConnectionSlot) {
        guard !closing else { return }
        slot.reconnectTimer = nil
        let endpoint = shared.configuration.endpoints[slot.endpointIndex]
        let proxies = shared.configuration.proxies
        if slot.endpointIndex < proxies.count, let proxy = proxies[slot.endpointIndex] {
            return connect(slot, to: endpoint, through: proxy)
        }
        // A fresh DNS resolution for every connection (docs/apns.md), off this thread.
        endpoint.resolve(on: reactor) { [self] result in
            guard !closing else { return }
            switch result {
            case .success(let addresses) where !addresses.isEmpty:
                shared.noteLookup(endpointIndex: slot.endpointIndex, failure: nil)
                let address = addresses[slot.addressIndex % addresses.count]
                open(slot, endpoint: endpoint, address: address)
            case .success:
                lookupFailed(slot, SocketError.nameNotFound(host: endpoint.host, reason: "the name has no address"))
            case .failure(let error):
                lookupFailed(slot, error)
            }
        }
    }

    /// Through a CONNECT proxy: the proxy's name is resolved afresh, APNs' is the proxy's to resolve.
    /// A proxy name that does not exist is a configuration error like a proxy that refuses.
    private func connect(_ slot: ConnectionSlot, to endpoint: Endpoint, through proxy: HTTPProxy) {
        proxy.endpoint.resolve(on: reactor) { [self] result in
            guard !closing else { return }
            switch result {
            case .success(let addresses) where !addresses.isEmpty:
                open(slot, endpoint: endpoint, address: addresses[slot.addressIndex % addresses.count], proxy: proxy)
            case .success:
                proxyLookupFailed(slot, proxy, definite: true, reason: "the name has no address")
            case .failure(.nameNotFound(_, let reason)):
                proxyLookupFailed(slot, proxy, definite: true, reason: reason)
            case .failure(.resolutionFailed(_, let reason)):
                proxyLookupFailed(slot, proxy, definite: false, reason: reason)
            case .failure(let error):
                proxyLookupFailed(slot, proxy, definite: false, reason: error.description)
            }
        }
    }

    private func proxyLookupFailed(_ slot: ConnectionSlot, _ proxy: HTTPProxy, definite: Bool, reason: String) {
        let error = ProxyError.cannotResolve(proxy: proxy.endpoint.description, detail: reason)
        shared.noteConnectFailure(endpointIndex: slot.endpointIndex,
                                  EndpointFailure(kind: "proxy lookup", text: error.description, isConfigurationError: definite))
        if shared.noteConnectionFailure(endpointIndex: slot.endpointIndex, detail: error.description,
                                        configurationError: definite, proxy: true) {
            return
        }
        scheduleReconnect(slot, after: slot.reconnects.connectionEnded(readyFor: nil))
    }

    /// What each answer keeps of APNs' headers: its apns-id, and the sandbox's apns-unique-id.
    static let apnsResponseHeaders = H2CapturedHeaders(text: ResponseHeaderNames.apnsID, uuid: ResponseHeaderNames.uniqueID)

    private func open(_ slot: ConnectionSlot, endpoint: Endpoint, address: SocketAddress, proxy: HTTPProxy? = nil) {
        guard let delegate else { return }
        let configuration = shared.configuration
        var settings = ClientConnection.Configuration(
            endpoint: endpoint, address: address, tls: group.tls, maxStreams: configuration.maxStreams,
            singleStreamUntilAuthorized: group.authentication.kind == .token)
        settings.proxy = proxy
        settings.capturedHeaders = configuration.broadcast == nil ? Self.apnsResponseHeaders : BroadcastCampaign.responseHeaders
        settings.pingInterval = .milliseconds(Int(configuration.pingIntervalSeconds * 1000))
        settings.pingTimeout = .milliseconds(Int(configuration.pingTimeoutSeconds * 1000))
        settings.responseTimeout = .milliseconds(Int(configuration.responseTimeoutSeconds * 1000))
        let connection = ClientConnection(reactor: reactor, configuration: settings, delegate: delegate)
        slot.connection = connection
        slot.window = 1
        slot.endpointLabel = endpoint.description
        connection.ownerTag = slots.firstIndex { $0 === slot } ?? -1
        connection.start()
        // Silence is the one failure that takes a timeout to name (10 s): say it early.
        let timeoutSeconds = Int(settings.connectTimeout.components.seconds)
        _ = reactor.schedule(after: Self.slowConnect) { [weak self, weak slot, weak connection] in
            guard let self, let slot, let connection, slot.connection === connection, !slot.isReady,
                  connection.readyAt == nil, !closing else { return }
            shared.noteSlowConnect(endpointIndex: slot.endpointIndex, seconds: Int(Self.slowConnect.components.seconds),
                                   timeoutSeconds: timeoutSeconds)
        }
    }

    /// How long a new connection may go unanswered before the endpoint is named as silent.
    static let slowConnect = Duration.seconds(3)

    /// The name did not resolve. The run stops when that is so on every endpoint (`CampaignShared`);
    /// until then, a wait and another lookup (DNS may come back).
    private func lookupFailed(_ slot: ConnectionSlot, _ error: SocketError) {
        let failure: CampaignShared.LookupFailure
        switch error {
        case .nameNotFound(let host, let reason): failure = .init(host: host, reason: reason, definite: true)
        case .resolutionFailed(let host, let reason): failure = .init(host: host, reason: reason, definite: false)
        default: failure = .init(host: shared.configuration.endpoints[slot.endpointIndex].host, reason: "\(error)", definite: false)
        }
        shared.noteLookup(endpointIndex: slot.endpointIndex, failure: failure)
        scheduleReconnect(slot, after: slot.reconnects.connectionEnded(readyFor: nil))
    }

    private func scheduleReconnect(_ slot: ConnectionSlot, after delay: Duration) {
        guard !closing else { return }
        slot.reconnectTimer = reactor.schedule(after: delay) { [self] in connect(slot) }
    }
}

extension ReconnectSchedule {
    /// Connection slot `id`'s schedule in a run of `configuration`: its backoff from the run's reconnect
    /// flags, its jitter from the run's `seed`, offset per slot so that connections do not reconnect in
    /// step (a fixed seed repeats every wait).
    init(for configuration: CampaignConfiguration, slot id: Int) {
        self.init(baseMilliseconds: configuration.reconnectBaseMilliseconds,
                  capMilliseconds: max(configuration.reconnectBaseMilliseconds, configuration.reconnectMaxMilliseconds),
                  seed: configuration.seed &+ UInt64(id) &* 104_729 &+ 1)
    }
}
