/// One client connection to one address of an APNs endpoint: socket + TLS + HTTP/2 session + health
/// timers (h2load's `Client`: it owns the bytes, `H2ClientSession` owns the protocol).
///
/// Lives on one Reactor: create it and call every method on that reactor's thread. It keeps its
/// delegate (strongly) until it closed, and the reactor keeps it while its socket is registered.
///
/// Life: `start()` connects, does the TLS handshake, sends the HTTP/2 preface and waits for the
/// server's SETTINGS; then `connectionDidBecomeReady`. The owner submits while `freeStreamSlots > 0`
/// (pull: when a slot frees, `connectionHasFreeSlots`). Every submitted tag ends in exactly one of
/// `didReceive` / `didNotProcess` / `lost`, whatever happens, and `didCloseWith` comes once, last.
///
/// Event order: events reach the delegate in the order nghttp2 produced them. For each read: `connectionDidBecomeReady` (once, before any
/// event of the read that brought the server's SETTINGS), then every event of the read in order (a
/// GOAWAY before the `didNotProcess(.aboveGoawayLastStream)` of the streams it cuts off), then one
/// `connectionHasFreeSlots` if slots opened, then one TLS write of everything submitted meanwhile.
/// When the connection dies, what the last read brought is still delivered first, then each request
/// still in flight (`lost`, or `didNotProcess(.neverSent)` if it never left), then `didCloseWith`.
/// Callbacks may run while `state` is already `.closed` (a read that ended in EOF): `submit` then
/// returns false.
///
/// Health, on one timer per connection: after `pingInterval` with nothing received a PING goes out,
/// and no acknowledgement within `pingTimeout` fails the connection; the oldest request in flight
/// older than `responseTimeout` fails it too. Either way everything in flight comes back `lost`
/// (`submittedAt` must therefore be on `Reactor.monotonicNanoseconds()`'s clock, see `submit`).
public final class ClientConnection {
    /// Where to connect and how: fixed for the connection's life (a reconnect is a new connection).
    public struct Configuration: Sendable {
        /// Host (SNI, certificate check, `:authority`) and port.
        public var endpoint: Endpoint
        /// The resolved address to connect to (the caller resolves: fresh DNS per connection): the
        /// proxy's address when `proxy` is set.
        public var address: SocketAddress
        /// Tunnel to `endpoint` through this CONNECT proxy, at `address` (nil: connect directly).
        /// The proxy resolves `endpoint`'s name; `connectTimeout` bounds the proxy's answer too.
        public var proxy: HTTPProxy?
        /// The client TLS context (trust, client certificate), shared by every connection of a run.
        public var tls: TLSContext
        /// Local cap on concurrent streams (`--max-streams`); the server's SETTINGS may lower it.
        public var maxStreams: Int
        /// Token auth: one stream until the first response that is not a 403 (APNs' rule).
        public var singleStreamUntilAuthorized: Bool
        /// The TCP connect must finish by then.
        public var connectTimeout: Duration = .seconds(10)
        /// Bounds the TLS handshake and the wait for the server's first SETTINGS together.
        public var handshakeTimeout: Duration = .seconds(10)
        /// A PING goes out after this long with nothing received.
        public var pingInterval: Duration = .seconds(60)
        /// No PING acknowledgement by then: the connection failed.
        public var pingTimeout: Duration = .seconds(10)
        /// The oldest in-flight request older than this: the connection failed (all in flight lost).
        public var responseTimeout: Duration = .seconds(30)

        /// The settings without defaults; the timeouts keep theirs until set.
        public init(endpoint: Endpoint, address: SocketAddress, tls: TLSContext, maxStreams: Int,
                    singleStreamUntilAuthorized: Bool) {
            self.endpoint = endpoint
            self.address = address
            self.tls = tls
            self.maxStreams = maxStreams
            self.singleStreamUntilAuthorized = singleStreamUntilAuthorized
        }
    }

    enum Phase {
        case idle, connecting, handshaking, awaitingSettings, ready, draining, closed
    }

    /// The reactor whose thread owns this connection: every call must come from it.
    public let reactor: Reactor
    /// What the connection was made with.
    public let configuration: Configuration
    /// A number the owner may set to find its own record of this connection from a delegate call
    /// without hashing (`Worker` keeps its slot index here). The connection never reads it.
    /// Computed, as `Reactor.turnStartedAt` is: a stored `var` read from another module costs a
    /// run-time exclusivity check per read, and the owner reads it for every answer.
    public var ownerTag: Int {
        get { storedOwnerTag }
        set { storedOwnerTag = newValue }
    }
    @exclusivity(unchecked) private var storedOwnerTag = -1
    /// "api.push.apple.com:443 (17.188.1.2:443)", for messages.
    public let peer: String
    @exclusivity(unchecked) var delegate: (any ClientConnectionDelegate)?

    @exclusivity(unchecked) var phase = Phase.idle
    @exclusivity(unchecked) var socket: Socket?
    @exclusivity(unchecked) var tls: TLSSession?
    @exclusivity(unchecked) var h2: H2ClientSession?
    @exclusivity(unchecked) var fd: Int32 = -1
    @exclusivity(unchecked) var isRegistered = false

    /// A settle loop is running (see ClientConnectionLoop.swift): nested entry points leave the work to it.
    @exclusivity(unchecked) var isSettling = false
    @exclusivity(unchecked) var slotsMayHaveOpened = false
    @exclusivity(unchecked) var closeRequested = false
    var closeError: ClientConnectionError?
    var closeNotified = false
    @exclusivity(unchecked) var turnScheduled = false

    // Health (ClientConnectionHealth.swift); monotonic nanoseconds.
    var healthTimer: TimerID?
    @exclusivity(unchecked) var healthDeadline = UInt64.max
    var handshakeDeadline: UInt64 = 0
    @exclusivity(unchecked) var lastReceiveAt: UInt64 = 0
    var pingSentAt: UInt64?
    /// PINGs sent so far (tests and diagnostics).
    var pingsSent = 0
    let pingIntervalNanoseconds: UInt64
    let pingTimeoutNanoseconds: UInt64
    let responseTimeoutNanoseconds: UInt64

    /// When the connection became ready (monotonic nanoseconds), nil before. For reconnect policy:
    /// a connection that stayed up a while was healthy (`ReconnectSchedule`).
    public internal(set) var readyAt: UInt64?
    /// Responses delivered so far. For reconnect policy: a connection that was answered proved the
    /// endpoint works, however soon it ended (`ReconnectSchedule`).
    public internal(set) var responsesReceived = 0
    /// Set when it closed: the end was orderly (the server's GOAWAY with NO_ERROR, our own close,
    /// or the server closing the socket cleanly), not a reset, a timeout, a TLS or protocol error.
    public internal(set) var endedGracefully = false

    /// An idle connection; `delegate` hears of its progress on `reactor`'s thread.
    public init(reactor: Reactor, configuration: Configuration, delegate: any ClientConnectionDelegate) {
        precondition(configuration.maxStreams > 0, "ClientConnection: maxStreams must be positive")
        self.reactor = reactor
        self.configuration = configuration
        self.delegate = delegate
        if let proxy = configuration.proxy {
            peer = "\(configuration.endpoint) via the proxy \(proxy.endpoint)"
        } else {
            peer = configuration.endpoint.host == configuration.address.ip
                ? configuration.address.description
                : "\(configuration.endpoint) (\(configuration.address))"
        }
        pingIntervalNanoseconds = Reactor.nanoseconds(configuration.pingInterval)
        pingTimeoutNanoseconds = Reactor.nanoseconds(configuration.pingTimeout)
        responseTimeoutNanoseconds = Reactor.nanoseconds(configuration.responseTimeout)
    }

    // MARK: State

    /// Connecting, ready, draining or closed, as a pool needs to know it.
    public var state: ClientConnectionState {
        switch phase {
        case .idle, .connecting, .handshaking, .awaitingSettings: .connecting
        case .ready: .ready
        case .draining: .draining
        case .closed: .closed
        }
    }

    /// How many requests `submit` takes now: 0 unless `.ready`.
    public var freeStreamSlots: Int {
        guard phase == .ready, let session = unretainedSession else { return 0 }
        return session._withUnsafeGuaranteedRef { $0.freeStreamSlots }
    }

    /// `h2` without a retain, for a call a sender makes before every request. Safe while `h2`
    /// holds the session: only `notifyClosed` lets it go, at the end of `settle`, and no call made
    /// on the session reaches `settle` (the session knows nothing of its connection).
    private var unretainedSession: Unmanaged<H2ClientSession>? {
        h2.map { Unmanaged.passUnretained($0) }
    }

    /// Requests submitted and not yet handed back.
    public var inFlightCount: Int { h2?.inFlightCount ?? 0 }

    /// The server's current SETTINGS_MAX_CONCURRENT_STREAMS (0 before the session exists).
    public var serverMaxConcurrentStreams: Int { h2?.serverMaxConcurrentStreams ?? 0 }

    /// With `singleStreamUntilAuthorized`: false until a response other than 403 arrived.
    public var isAuthorized: Bool { h2?.isAuthorized ?? false }

    // MARK: Life

    /// Connects (through the proxy's tunnel, with one) → TLS handshake → HTTP/2 preface and
    /// SETTINGS; then `connectionDidBecomeReady`, or
    /// `didCloseWith(error)` if any step fails. Call once.
    public func start() {
        precondition(phase == .idle, "ClientConnection.start() called twice")
        phase = .connecting
        if let proxy = configuration.proxy {
            ProxyTunnel.open(through: proxy, at: configuration.address, to: configuration.endpoint,
                             timeout: configuration.connectTimeout, on: reactor) { [self] result in
                connectFinished(result.mapError { .proxy($0) })
            }
            return
        }
        Socket.connect(to: configuration.address, timeout: configuration.connectTimeout, on: reactor) { [self] result in
            connectFinished(result.mapError { .connect($0) })
        }
    }

    /// Submits one request; false if it cannot be taken now (no free slot, draining, closed): the
    /// caller keeps the job. Calls no delegate method. `submittedAt` must be
    /// `Reactor.monotonicNanoseconds()` at submission, or the reactor's `turnStartedAt` during the
    /// turn that submits: the response timeout is measured from it, and it comes back in the
    /// `H2Response` (for latency).
    public func submit(path: String, headers: [H2Header], body: [UInt8], tag: UInt64, submittedAt: UInt64) -> Bool {
        submitting(submittedAt: submittedAt) { h2 throws(H2Error) in
            try h2.submit(path: path, headers: headers, body: body, tag: tag, submittedAt: submittedAt)
        }
    }

    /// The template form of `submit` (see `H2ClientSession.submit(template:pathSuffix:headers:body:tag:submittedAt:)`).
    /// `template` and `body` move into the request's stream (see there).
    public func submit(template: consuming H2RequestTemplate, pathSuffix: ArraySlice<UInt8>, headers: [H2Header] = [],
                       body: consuming ArraySlice<UInt8>, tag: UInt64, submittedAt: UInt64) -> Bool {
        // Not through `submitting`: a closure would capture `template` and `body` and pass copies
        // on. Unretained, as the one-buffer form below.
        guard phase == .ready, let session = unretainedSession else { return false }
        var template: H2RequestTemplate? = consume template
        var body: ArraySlice<UInt8>? = consume body
        let wasIdle = session._withUnsafeGuaranteedRef { $0.inFlightCount == 0 }
        do {
            _ = try session._withUnsafeGuaranteedRef { h2 in
                try h2.submit(template: template.take()!, pathSuffix: pathSuffix, headers: headers, body: body.take()!,
                              tag: tag, submittedAt: submittedAt)
            }
        } catch {
            return false
        }
        if wasIdle { responseDeadlineMayBeEarlier(submittedAt &+ responseTimeoutNanoseconds) }
        return true
    }

    /// The one-buffer form of `submit` (see `H2ClientSession.submit(template:bytes:pathSuffix:body:headers:tag:submittedAt:)`).
    /// `template` and `bytes` move into the request's stream.
    public func submit(template: consuming H2RequestTemplate, bytes: consuming [UInt8], pathSuffix: Range<Int>,
                       body: Range<Int>, headers: [H2Header] = [], tag: UInt64, submittedAt: UInt64) -> Bool {
        guard phase == .ready, let session = unretainedSession else { return false }
        // Unretained (see `unretainedSession`): `let h2` was a retain and a release per request. The
        // closure takes the references out of optionals: captured as they are, they would be copied.
        var template: H2RequestTemplate? = consume template
        var bytes: [UInt8]? = consume bytes
        let wasIdle = session._withUnsafeGuaranteedRef { $0.inFlightCount == 0 }
        do {
            _ = try session._withUnsafeGuaranteedRef { h2 in
                try h2.submit(template: template.take()!, bytes: bytes.take()!, pathSuffix: pathSuffix, body: body,
                              headers: headers, tag: tag, submittedAt: submittedAt)
            }
        } catch {
            return false
        }
        if wasIdle { responseDeadlineMayBeEarlier(submittedAt &+ responseTimeoutNanoseconds) }
        return true
    }

    private func submitting(submittedAt: UInt64, _ submit: (H2ClientSession) throws(H2Error) -> Int32) -> Bool {
        guard phase == .ready, let h2 else { return false }
        let wasIdle = h2.inFlightCount == 0
        do {
            _ = try submit(h2)
        } catch {
            return false
        }
        if wasIdle { responseDeadlineMayBeEarlier(submittedAt &+ responseTimeoutNanoseconds) }
        return true
    }

    /// `submit` stamped with the reactor's clock now.
    public func submit(path: String, headers: [H2Header], body: [UInt8], tag: UInt64) -> Bool {
        submit(path: path, headers: headers, body: body, tag: tag, submittedAt: Reactor.monotonicNanoseconds())
    }

    /// Writes everything submitted so far (one TLS write for the batch). Submissions made inside
    /// delegate callbacks are flushed by the connection itself after it handles the read; call
    /// flush() after submitting from anywhere else (timers, execute blocks). Calls no delegate
    /// method: a failure found here is reported on the next reactor turn.
    public func flush() {
        guard !isSettling else { return }
        writeOutput()
        if phase == .closed || h2?.hasEvents == true || h2?.isFinished == true { scheduleTurn() }
    }

    /// Graceful end: GOAWAY(NO_ERROR), let in-flight requests finish, then close
    /// (`didCloseWith(nil)`, later, never from inside this call).
    public func close() {
        switch phase {
        case .closed:
            return
        case .idle, .connecting, .handshaking:
            tearDown(nil)
        case .awaitingSettings, .ready, .draining:
            closeRequested = true
            phase = .draining
            do {
                try h2?.shutdown()
            } catch {
                tearDown(.protocolError(error))
            }
            if !isSettling { writeOutput() }
        }
        scheduleTurn()
    }

    /// Ends now: every in-flight tag comes back (`lost`, or `didNotProcess(.neverSent)` for those
    /// that never left), then `didCloseWith(nil)`, before this returns (after the current delegate
    /// call returns, when called from inside one).
    public func abort() {
        tearDown(nil)
        settle()
    }
}
