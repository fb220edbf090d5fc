import Glibc

/// One accepted HTTP/2-over-TLS connection of an `H2Server`: socket + TLS + `H2ServerSession`,
/// driven by the server's reactor. The handler answers through it.
///
/// Reactor thread only. Output is batched: whatever the handler submits during a read (or during
/// timers of one loop turn) leaves in one drain of the session and one TLS write.
public final class H2ServerConnection: ReactorHandler {
    /// Unique within its server, from 1 in accept order.
    public let id: UInt64
    /// The client's address, for messages.
    public let peer: String
    /// The subject of the client's certificate under mutual TLS, else nil.
    public let peerCertificateSubject: String?
    /// The connection is closed: responses and timers for it are dropped.
    @exclusivity(unchecked) public private(set) var isClosed = false
    /// True after `stall()`: the socket is no longer read.
    @exclusivity(unchecked) public private(set) var isStalled = false
    /// Everything was said (GOAWAY, then every stream at or below its last-stream-id answered) and
    /// the write side is closed; the client's bytes are read and dropped until it closes.
    @exclusivity(unchecked) public private(set) var isHalfClosed = false
    private var lingerTimer: TimerID?
    /// How long a half-closed connection waits for its client to close.
    static let lingerLimit: Duration = .seconds(3)

    let reactor: Reactor
    private let tls: TLSSession
    private let session: H2ServerSession
    private let fd: Int32
    @exclusivity(unchecked) private var handler: (any H2ServerConnectionHandler)?
    @exclusivity(unchecked) private var inIOCallback = false
    @exclusivity(unchecked) private var flushScheduled = false
    private let onClose: (H2ServerConnection) -> Void
    private static let drainLimit = 1 << 20

    init(id: UInt64, tls: TLSSession, reactor: Reactor, session: H2ServerSession.Configuration,
         onClose: @escaping (H2ServerConnection) -> Void) throws(H2Error) {
        self.id = id
        self.tls = tls
        self.reactor = reactor
        self.session = try H2ServerSession(configuration: session)
        self.onClose = onClose
        peer = tls.peer
        peerCertificateSubject = tls.peerCertificateSubject
        fd = tls.socket.fd
    }

    /// Registers on the reactor and starts with the server's SETTINGS.
    func open(handler: any H2ServerConnectionHandler) throws(SocketError) {
        self.handler = handler
        session.admitsStream = { [unowned self] streamID in
            self.handler?.admitsStream(streamID, on: self) ?? false
        }
        try reactor.register(fd, interest: .readable, handler: self)
        flushNow()
    }

    // MARK: What a handler may do

    /// Answers a complete request. False when the stream is gone (reset by the client, above a
    /// GOAWAY's last-stream-id, the connection closed) or was answered already.
    @discardableResult
    public func respond(streamID: Int32, status: Int, headers: [H2Header] = [], body: [UInt8] = []) -> Bool {
        guard !isClosed else { return false }
        let sent: Bool
        do {
            sent = try session.respond(streamID: streamID, status: status, headers: headers, body: body)
        } catch {
            return false
        }
        if sent { outputPending() }
        return sent
    }

    /// Answers with `:status` and at most one more field (no allocation for an empty body); false
    /// as for `respond(headers:)`.
    @discardableResult
    public func respond(streamID: Int32, status: Int, field: H2ResponseField?, second: H2ResponseField? = nil,
                        body: [UInt8] = []) -> Bool {
        guard !isClosed else { return false }
        let sent: Bool
        do {
            sent = try session.respond(streamID: streamID, status: status, field: field, second: second, body: body)
        } catch {
            return false
        }
        if sent { outputPending() }
        return sent
    }

    /// Resets a stream with REFUSED_STREAM (the client may send the request again).
    public func refuse(streamID: Int32) {
        guard !isClosed else { return }
        try? session.refuse(streamID: streamID)
        outputPending()
    }

    /// Announces a new SETTINGS_MAX_CONCURRENT_STREAMS (enforced by nghttp2 once the client ACKs it).
    public func updateMaxConcurrentStreams(_ value: Int) {
        guard !isClosed, value != session.announcedMaxConcurrentStreams else { return }
        try? session.updateMaxConcurrentStreams(value)
        outputPending()
    }

    /// The SETTINGS_MAX_CONCURRENT_STREAMS most recently announced.
    public var announcedMaxConcurrentStreams: Int { session.announcedMaxConcurrentStreams }

    /// Sends GOAWAY: streams above `lastStreamID` (default: the last one processed) are dropped
    /// unanswered; those at or below it may still be answered. Once they are, and written, the
    /// connection half-closes and waits (at most `lingerLimit`) for the client to close.
    public func goaway(lastStreamID: Int32? = nil, errorCode: UInt32 = 0, debugData: String = "") {
        guard !isClosed else { return }
        try? session.goaway(lastStreamID: lastStreamID, errorCode: errorCode, debugData: debugData)
        outputPending()
    }

    /// Closes the TCP connection abruptly (RST, no TLS close_notify, no GOAWAY).
    public func reset() {
        guard !isClosed else { return }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        reactor.deregister(fd)
        tls.socket.close()
        finishClose()
    }

    /// Stops reading the socket for good: requests, PINGs and SETTINGS ACKs go unread, so the
    /// connection looks dead to its client. It closes when the client hangs up or the server stops.
    public func stall() {
        guard !isClosed, !isStalled else { return }
        isStalled = true
        updateInterest()
    }

    /// Runs `action` on the reactor thread after `delay` (simulated latency).
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping () -> Void) -> TimerID {
        reactor.schedule(after: delay, action)
    }

    /// Streams open now.
    public var openStreamCount: Int { session.openStreamCount }
    /// PRIORITY frames (and HEADERS with priority) received.
    public var priorityFramesReceived: Int { session.priorityFramesReceived }
    /// The most streams that were open at once.
    public var maxConcurrentStreamsSeen: Int { session.maxConcurrentStreamsSeen }

    // MARK: Reactor

    /// Reads what TLS has decrypted into the session and hands complete requests to the handler.
    public func onReadable() {
        guard !isClosed, !isStalled else { return }
        if isHalfClosed { return drainUntilClientCloses() }
        inIOCallback = true
        let status: TLSReadStatus
        do {
            status = try tls.readAvailable { bytes in try session.receive(bytes) }
        } catch {
            // A client killed with answers unread resets the connection: the requests that arrived
            // before the reset, in this same read, were still received (and a mock's record says so).
            deliverEvents()
            inIOCallback = false
            return close()
        }
        deliverEvents()
        inIOCallback = false
        if status == .closed { return close() }
        flushNow()
    }

    /// The socket drained: writes what the session still has queued (nothing once half-closed).
    public func onWritable() { if !isHalfClosed { flushNow() } }
    /// The peer hung up: the connection closes.
    public func onHangup() { close() }
    /// The server is stopping: the connection closes.
    public func onReactorStop() { close() }

    // MARK: Internals

    private func deliverEvents() {
        guard session.hasEvents else { return }
        session.drainEvents { event in
            guard let handler else { return }
            switch event {
            case .request(let request): handler.received(request, on: self)
            case .streamClosed(let streamID, let errorCode): handler.streamClosed(streamID, errorCode: errorCode, on: self)
            case .goaway: break
            }
        }
    }

    /// Output was queued in the session: send it at the end of this read, or on the next loop turn.
    private func outputPending() {
        guard !inIOCallback, !flushScheduled, !isClosed else { return }
        flushScheduled = true
        reactor.schedule(after: .zero) { [self] in
            flushScheduled = false
            flushNow()
        }
    }

    func flushNow() {
        guard !isClosed, !isHalfClosed else { return }
        do {
            while true {
                let produced = try session.drainOutput(into: tls, limit: H2ServerConnection.drainLimit)
                let sentAll = try tls.flush()
                if !sentAll || produced == 0 || !session.wantsWrite { break }
            }
        } catch {
            return close()
        }
        if session.isFinished, !tls.wantsWritable { return halfClose() }
        updateInterest()
    }

    /// The session has nothing more to say and its last bytes are in the socket: close_notify and
    /// FIN go out, and the client gets `lingerLimit` to read them and close. Closing now, with its
    /// requests (those above last-stream-id) unread, would reset the connection, and a reset can
    /// destroy answers still on their way to the client: answers it would then send again.
    private func halfClose() {
        guard !isClosed, !isHalfClosed else { return }
        isHalfClosed = true
        tls.closeWrite()
        lingerTimer = reactor.schedule(after: Self.lingerLimit) { [weak self] in
            self?.lingerTimer = nil
            self?.close()
        }
        updateInterest()
    }

    /// Reads and drops what the client still sends after the half-close; closes at its end.
    private func drainUntilClientCloses() {
        let status = try? tls.readAvailable { _ in }
        if status != .open { close() }
    }

    private func updateInterest() {
        guard !isClosed else { return }
        var interest: ReactorInterest = isStalled ? [] : .readable
        if tls.wantsWritable, !isHalfClosed { interest.insert(.writable) }
        reactor.setInterest(interest, for: fd)
    }

    /// Closes gracefully: GOAWAY if the session is still open, what can be sent, then close_notify.
    func shutDown() {
        guard !isClosed else { return }
        if !isStalled, !isHalfClosed {
            try? session.goaway(debugData: "{\"reason\":\"Shutdown\"}")
            inIOCallback = true
            flushNow()
            inIOCallback = false
        }
        close()
    }

    func close() {
        guard !isClosed else { return }
        if let lingerTimer { reactor.cancel(lingerTimer) }
        lingerTimer = nil
        reactor.deregister(fd)
        tls.close()
        finishClose()
    }

    private func finishClose() {
        isClosed = true
        let handler = self.handler
        self.handler = nil
        session.admitsStream = nil
        handler?.connectionClosed(self)
        onClose(self)
    }
}
