import CNGHTTP2

// One timer per connection, armed at the earliest of its deadlines: the handshake's (until the
// server's SETTINGS), the PING (silence for pingInterval), the PING acknowledgement, and the oldest
// in-flight request's response. Activity only moves deadlines later, so the timer is not re-armed
// per read or per request: when it fires early it finds nothing due and re-arms. Only a deadline
// that becomes earlier (the first request after an idle spell, a PING sent or acknowledged) re-arms it.

extension ClientConnection {
    /// The earliest instant something must be checked, or `.max`.
    private func nextHealthDeadline() -> UInt64 {
        switch phase {
        case .handshaking, .awaitingSettings:
            return handshakeDeadline
        case .ready, .draining:
            guard let h2 else { return .max }
            var deadline = pingSentAt.map { $0 &+ pingTimeoutNanoseconds } ?? (lastReceiveAt &+ pingIntervalNanoseconds)
            if let oldest = h2.oldestInFlightSubmittedAt() {
                deadline = min(deadline, oldest &+ responseTimeoutNanoseconds)
            }
            return deadline
        case .idle, .connecting, .closed:
            return .max
        }
    }

    func armHealthTimer() {
        let deadline = nextHealthDeadline()
        if healthTimer != nil, deadline == healthDeadline { return }
        cancelHealthTimer()
        guard deadline != .max else { return }
        healthDeadline = deadline
        let now = Reactor.monotonicNanoseconds()
        let delay = deadline > now ? deadline - now : 0
        healthTimer = reactor.schedule(after: .nanoseconds(Int64(clamping: delay))) { [weak self] in
            guard let self else { return }
            healthTimer = nil
            healthDeadline = .max
            checkHealth()
        }
    }

    func cancelHealthTimer() {
        if let healthTimer { reactor.cancel(healthTimer) }
        healthTimer = nil
        healthDeadline = .max
    }

    /// A request was submitted into an idle connection: its response deadline may be the earliest.
    func responseDeadlineMayBeEarlier(_ deadline: UInt64) {
        guard deadline < healthDeadline, phase == .ready || phase == .draining else { return }
        armHealthTimer()
    }

    private func checkHealth() {
        let now = Reactor.monotonicNanoseconds()
        switch phase {
        case .handshaking, .awaitingSettings:
            if now >= handshakeDeadline {
                tearDown(.tls(.handshakeTimedOut(peer: configuration.endpoint.host,
                                                 timeout: configuration.handshakeTimeout)))
            }
        case .ready, .draining:
            guard let h2 else { break }
            if let sent = pingSentAt, now &- sent >= pingTimeoutNanoseconds {
                tearDown(.pingTimeout(peer: peer, timeout: configuration.pingTimeout))
            } else if let oldest = h2.oldestInFlightSubmittedAt(), now >= oldest &+ responseTimeoutNanoseconds {
                tearDown(.responseTimeout(peer: peer, timeout: configuration.responseTimeout))
            } else if pingSentAt == nil, now &- lastReceiveAt >= pingIntervalNanoseconds {
                do {
                    if try h2.submitPing() {
                        pingSentAt = now
                        pingsSent += 1
                    }
                } catch {
                    tearDown(.protocolError(error))
                }
            }
        case .idle, .connecting, .closed:
            return
        }
        armHealthTimer()
        settle()
    }
}
