import CNGHTTP2

/// One client connection to one address of an APNs endpoint: socket + TLS + HTTP/2 session + health
/// timers (h2load's `Client`: it owns the bytes, `H2ClientSession` owns the protocol).
///
/// Lives on one Reactor: create it and call every method on that reactor's thread. It keeps its
/// delegate (strongly) until it closed, and the reactor keeps it while its socket is registered.
/// Closed before it is ready, it says so on the reactor's next turn, which a stop from another
/// thread can pre-empt: `abort()` whatever is left before stopping the reactor, or the connection
/// and its delegate keep each other alive.
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
        /// The response headers each response keeps (`H2ClientSession.Configuration.capturedHeaders`).
        public var capturedHeaders: H2CapturedHeaders = .none
        /// Response bodies are cut to this many bytes (`H2ClientSession.Configuration.maxResponseBodyBytes`):
        /// APNs' error bodies are small, a channel list is not.
        public var maxResponseBodyBytes = 16 * 1024
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

    /// A settle loop is running (see the connection's loop below): nested entry points leave the work to it.
    @exclusivity(unchecked) var isSettling = false
    @exclusivity(unchecked) var slotsMayHaveOpened = false
    @exclusivity(unchecked) var closeRequested = false
    var closeError: ClientConnectionError?
    var closeNotified = false
    @exclusivity(unchecked) var turnScheduled = false

    // Health (the timer, below); monotonic nanoseconds.
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

    /// Submits one request, `method path` (POST unless told) with `headers` and `body`, to come back
    /// to the delegate under `tag`; false if it cannot be taken now (no free slot, draining, closed):
    /// the caller keeps it.
    /// Calls no delegate method. `submittedAt` must be `Reactor.monotonicNanoseconds()` at
    /// submission (the default), or the reactor's `turnStartedAt` during the turn that submits: the
    /// response timeout is measured from it, and it comes back in the `H2Response` (for latency).
    public func submit(path: String, headers: [H2Header], body: [UInt8], tag: UInt64,
                       submittedAt: UInt64 = Reactor.monotonicNanoseconds(), method: String = "POST") -> Bool {
        guard phase == .ready, let h2 else { return false }
        let wasIdle = h2.inFlightCount == 0
        do {
            try h2.submit(path: path, headers: headers, body: body, tag: tag, submittedAt: submittedAt, method: method)
        } catch {
            return false
        }
        if wasIdle { responseDeadlineMayBeEarlier(submittedAt &+ responseTimeoutNanoseconds) }
        return true
    }

    // A bulk sender's forms of `submit`, one per way it holds a row's bytes. Each is written out:
    // shared through a helper (a closure for the submit, or the session look-up and the deadline
    // step), the one-buffer form cost 14 to 23 more instructions a request in callgrind.

    /// `submit` with `template`'s method, headers and path prefix, then `pathSuffix`, `headers` and
    /// `body` (see `H2ClientSession.submit(template:pathSuffix:headers:body:tag:submittedAt:)`).
    /// `template` and `body` move into the request's stream.
    package func submit(template: consuming H2RequestTemplate, pathSuffix: ArraySlice<UInt8>, headers: [H2Header] = [],
                        body: consuming ArraySlice<UInt8>, tag: UInt64, submittedAt: UInt64) -> Bool {
        // Unretained, as the one-buffer form below.
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

    /// `submit` with the path suffix and the body as ranges of one buffer, which moves into the
    /// request's stream with `template` (see
    /// `H2ClientSession.submit(template:bytes:pathSuffix:body:headers:tag:submittedAt:)`).
    package func submit(template: consuming H2RequestTemplate, bytes: consuming [UInt8], pathSuffix: Range<Int>,
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

// The connection's loop on its reactor thread. Every entry point (socket readiness, a timer, a
// posted turn, abort) does its own work and then calls `settle()`, the one place that calls the
// delegate: it delivers the session's events in order, tells the owner about free slots, writes
// what the callbacks submitted (one TLS write per batch), and closes when the session is done.

extension ClientConnection {
    // MARK: Readiness

    func onReadable() {
        if phase == .handshaking {
            stepHandshake()
        } else {
            readAndReceive()
        }
        settle()
    }

    func onWritable() {
        if phase == .handshaking {
            stepHandshake()
        } else {
            writeOutput()
            // A TLS 1.3 key update can make a read wait for the socket to drain.
            readAndReceive()
        }
        settle()
    }

    func onHangup() {
        if phase == .handshaking {
            stepHandshake()
            if phase == .handshaking {
                tearDown(.tls(.handshakeFailed(peer: configuration.endpoint.host,
                                               detail: "the server closed the connection")))
            }
        } else {
            // Take what the peer sent before it hung up; a read budget may leave some for a later call.
            var rounds = 0
            while isRegistered, phase != .closed, rounds < 64 {
                readAndReceive()
                rounds += 1
            }
            if phase != .closed { tearDown(.peerClosed(peer: peer)) }
        }
        settle()
    }

    func onReactorStop() {
        abort()
    }

    /// Feeds what TLS has to the session; events wait for `settle`. True when bytes arrived.
    @discardableResult
    func readAndReceive() -> Bool {
        guard let tls, let h2, isRegistered else { return false }
        var received = false
        do {
            let status = try tls.readAvailable { bytes in
                received = true
                try h2.receive(bytes)
            }
            if received { lastReceiveAt = Reactor.monotonicNanoseconds() }
            if status == .closed {
                // After GOAWAY (theirs or ours) with nothing left in flight, an EOF is the expected end.
                let clean = h2.inFlightCount == 0 && (closeRequested || h2.receivedGoaway != nil)
                tearDown(clean ? nil : .peerClosed(peer: peer))
            }
        } catch let error as TLSError {
            tearDown(.tls(error))
        } catch let error as H2Error {
            tearDown(.protocolError(error))
        } catch {
            tearDown(.peerClosed(peer: peer))
        }
        return received
    }

    /// Moves the session's output into TLS and sends it, keeping writable interest on exactly
    /// while output waits for the socket.
    func writeOutput() {
        guard let tls, let h2, isRegistered else { return }
        do {
            while true {
                let appended = try h2.drainOutput(into: tls, limit: ClientConnection.outputLimit)
                let sentAll: Bool
                do {
                    sentAll = try flushTLS(tls)
                } catch {
                    return writeFailed(error)
                }
                guard sentAll, appended > 0, h2.wantsWrite else { break }
            }
        } catch {
            return tearDown(.protocolError(error))
        }
        reactor.setInterest(tls.wantsWritable ? [.readable, .writable] : .readable, for: fd)
    }

    /// The socket refused our bytes (EPIPE, ECONNRESET: the server closed or reset it). What it
    /// sent before is still in the socket (answers, its GOAWAY): read and settle it first, so a
    /// request that was answered is not handed back as lost and sent twice.
    private func writeFailed(_ error: TLSError) {
        var rounds = 0
        while isRegistered, phase != .closed, rounds < 64, readAndReceive() { rounds += 1 }
        if phase == .closed, closeError == .peerClosed(peer: peer) {
            // The read met the end of a reset connection (the write took the reset's error).
            closeError = .tls(error)
            endedGracefully = false
        }
        tearDown(.tls(error))
    }

    private func flushTLS(_ tls: TLSSession) throws(TLSError) -> Bool {
        try tls.flush()
    }

    /// Bytes of session output pending in TLS at most; nghttp2 keeps the rest until the socket drains.
    static let outputLimit = 1 << 20

    // MARK: Settling

    /// Delivers events, offers free slots, writes, and closes when done; the only caller of the
    /// delegate. Runs to a fixed point; nested calls (from delegate callbacks) return at once.
    func settle() {
        guard !isSettling else { return }
        isSettling = true
        defer { isSettling = false }
        while true {
            if phase == .awaitingSettings, let h2, h2.hasReceivedSettings {
                phase = h2.receivedGoaway == nil ? .ready : .draining
                readyAt = Reactor.monotonicNanoseconds()
                armHealthTimer()
                if phase == .ready { delegate?.connectionDidBecomeReady(self) }
                continue
            }
            if let h2, h2.hasEvents {
                // One reference to the delegate for the whole batch: calling through the property
                // retained and released it for every event. Only notifyClosed changes the
                // property, and it cannot run inside this loop.
                let delegate = self.delegate
                h2.drainEvents { handle($0, delegate: delegate) }
                continue
            }
            if phase == .closed {
                notifyClosed()
                return
            }
            if slotsMayHaveOpened {
                slotsMayHaveOpened = false
                if freeStreamSlots > 0 { delegate?.connectionHasFreeSlots(self) }
                continue
            }
            writeOutput()
            if let h2, h2.hasEvents || phase == .closed { continue }
            if let h2, h2.isFinished, phase != .idle {
                let clean = h2.inFlightCount == 0 && (closeRequested || h2.receivedGoaway != nil)
                tearDown(clean ? nil : .protocolError(ClientConnection.sessionEndedByProtocolError))
                continue
            }
            return
        }
    }

    private func handle(_ event: H2ClientEvent, delegate: (any ClientConnectionDelegate)?) {
        switch event {
        case let .response(response):
            slotsMayHaveOpened = true
            responsesReceived &+= 1
            delegate?.connection(self, didReceive: response)
        case let .notProcessed(tag, cause):
            slotsMayHaveOpened = true
            delegate?.connection(self, didNotProcess: tag, cause: cause)
        case let .lost(tag, cause):
            slotsMayHaveOpened = true
            delegate?.connection(self, lost: tag, cause: cause)
        case let .goaway(goaway):
            if phase == .ready || phase == .awaitingSettings { phase = .draining }
            delegate?.connection(self, didReceiveGoaway: goaway)
        case .pingAcknowledged:
            pingSentAt = nil
            // The next PING is due pingInterval from now, which may be before the ack deadline armed.
            armHealthTimer()
        case .maxConcurrentStreamsChanged:
            slotsMayHaveOpened = true
        }
    }

    /// nghttp2 ended the session itself (it sent GOAWAY over a peer's protocol violation).
    static let sessionEndedByProtocolError = H2Error.nghttp2(
        code: NGHTTP2_ERR_PROTO.rawValue,
        message: "the server's frames broke the protocol and the session was ended with GOAWAY")

    /// Runs `settle` on the next reactor turn (once, however often asked).
    func scheduleTurn() {
        guard !turnScheduled else { return }
        turnScheduled = true
        reactor.schedule(after: .zero) { [self] in
            turnScheduled = false
            settle()
        }
    }

    // MARK: Ending

    /// Closes the socket and hands every in-flight request back as session events, which `settle`
    /// delivers before `didCloseWith`. Idempotent.
    func tearDown(_ error: ClientConnectionError?) {
        guard phase != .closed else { return }
        phase = .closed
        closeError = error
        switch error {
        case nil: endedGracefully = (h2?.receivedGoaway?.errorCode ?? 0) == 0
        case .peerClosed?: endedGracefully = true
        default: endedGracefully = false
        }
        cancelHealthTimer()
        if isRegistered {
            reactor.deregister(fd)
            isRegistered = false
        }
        if let tls {
            tls.close()
        } else {
            socket?.close()
        }
        h2?.terminate()
    }

    private func notifyClosed() {
        guard !closeNotified else { return }
        closeNotified = true
        let delegate = self.delegate
        self.delegate = nil
        tls = nil
        socket = nil
        h2 = nil
        delegate?.connection(self, didCloseWith: closeError)
    }
}

/// The reactor's handle on a connection. A separate object so the readiness callbacks stay out
/// of `ClientConnection`'s public API; it keeps the connection alive while registered.
final class ClientConnectionHandler: ReactorHandler {
    let connection: ClientConnection

    init(_ connection: ClientConnection) { self.connection = connection }

    func onReadable() { connection.onReadable() }
    func onWritable() { connection.onWritable() }
    func onHangup() { connection.onHangup() }
    func onReactorStop() { connection.onReactorStop() }
}
