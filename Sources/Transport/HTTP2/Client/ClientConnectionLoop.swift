import CNGHTTP2

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
