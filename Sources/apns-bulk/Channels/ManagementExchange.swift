import APNs
import Pipeline
import Transport

/// `ManagementClient`'s requests on their reactor thread: one connection at a time, each request
/// sent until it has a final answer, the run ended once every one has (or nothing more may be
/// sent). Lives on the reactor's thread only: created there, called there by the connection,
/// its timers and resolutions.
final class ManagementExchange: ClientConnectionDelegate {
    private struct Sent {
        let index: Int
        /// The provider token the request carried (token auth), to be replaced when it expired.
        let token: ProviderToken?
    }

    private let requests: [ManagementRequest]
    private let target: ManagementTarget
    private let policy: ManagementPolicy
    private let reactor: Reactor
    private let stopAtFirstRefusal: Bool
    private let onAnswer: (Int, ManagementAnswer) -> Void
    private let finish: (ManagementStop?) -> Void

    /// Requests to send next, in order (`next` is the first not yet taken).
    private var waiting: [Int]
    private var next = 0
    private var attempts: [Int]
    private var lostBefore: [Bool]
    /// Times a request came back certainly unprocessed (REFUSED_STREAM, above a GOAWAY): sent
    /// again without counting an attempt, but not for ever.
    private var unprocessed: [Int]
    private var inFlight: [UInt64: Sent] = [:]
    private var nextTag: UInt64 = 1
    /// Requests waiting out a backoff, by request.
    private var retryTimers: [Int: TimerID] = [:]
    private var connection: ClientConnection?
    private var reconnectTimer: TimerID?
    /// A lookup for the next connection is under way.
    private var resolving = false
    /// Connections in a row that ended before any answer (a connect, TLS or proxy failure among them).
    private var failedConnections = 0
    private var backoff: Backoff
    /// Nothing more is sent: a refusal with `stopAtFirstRefusal`, or `stop`.
    private var halted = false
    private var stop: ManagementStop?
    private var finished = false

    init(requests: [ManagementRequest], target: ManagementTarget, policy: ManagementPolicy, reactor: Reactor,
         stopAtFirstRefusal: Bool, onAnswer: @escaping (Int, ManagementAnswer) -> Void,
         finish: @escaping (ManagementStop?) -> Void) {
        self.requests = requests
        self.target = target
        self.policy = policy
        self.reactor = reactor
        self.stopAtFirstRefusal = stopAtFirstRefusal
        self.onAnswer = onAnswer
        self.finish = finish
        waiting = Array(requests.indices)
        attempts = Array(repeating: 0, count: requests.count)
        lostBefore = Array(repeating: false, count: requests.count)
        unprocessed = Array(repeating: 0, count: requests.count)
        backoff = Backoff(baseMilliseconds: policy.backoffBaseMilliseconds, capMilliseconds: policy.backoffCapMilliseconds,
                          seed: UInt64.random(in: 1...UInt64.max))
    }

    func start() { connect() }

    // MARK: Connecting

    private func connect() {
        reconnectTimer = nil
        guard !finished, !halted, connection == nil, !resolving else { return }
        resolving = true
        // A fresh lookup for each connection; through a proxy, the proxy's name (it resolves APNs').
        let name = target.proxy?.endpoint ?? target.endpoint
        name.resolve(on: reactor) { [self] result in
            resolving = false
            guard !finished, !halted, connection == nil else { return finishIfDone() }
            switch result {
            case .success(let addresses) where !addresses.isEmpty:
                open(addresses[failedConnections % addresses.count])
            case .success:
                end(ManagementStop(message: "cannot resolve \(name.host): the name has no address; check --endpoint"
                                   + (target.proxy == nil ? "" : " and --proxy")))
            case .failure(.nameNotFound(let host, let reason)):
                end(ManagementStop(message: "cannot resolve \(host): \(reason); check --endpoint"
                                   + (target.proxy == nil ? "" : " and --proxy") + " and the network"))
            case .failure(let error):
                connectionFailed(error.description, configurationError: false)
            }
        }
    }

    private func open(_ address: SocketAddress) {
        var settings = ClientConnection.Configuration(endpoint: target.endpoint, address: address, tls: target.tls,
                                                      maxStreams: policy.concurrency,
                                                      singleStreamUntilAuthorized: target.tokens != nil)
        settings.proxy = target.proxy
        settings.capturedHeaders = H2CapturedHeaders(text: ChannelManagementAPI.channelIDHeader)
        settings.maxResponseBodyBytes = ChannelManagementAPI.maxAnswerBytes
        settings.connectTimeout = policy.connectTimeout
        settings.responseTimeout = policy.responseTimeout
        let connection = ClientConnection(reactor: reactor, configuration: settings, delegate: self)
        self.connection = connection
        connection.start()
    }

    /// A connection ended before any answer: another try after a backoff, until `connectAttempts`
    /// in a row; at once the end for what retrying cannot mend (TLS verification, the proxy).
    private func connectionFailed(_ detail: String, configurationError: Bool) {
        failedConnections += 1
        if configurationError {
            return end(ManagementStop(message: "\(target.endpoint): \(detail)"))
        }
        if failedConnections >= policy.connectAttempts {
            let via = target.proxy.map { " through the proxy \($0.endpoint)" } ?? ""
            return end(ManagementStop(message: "cannot reach \(target.endpoint)\(via) (\(failedConnections) tries): \(detail); "
                                      + "check --endpoint, --proxy and the network"))
        }
        let delay = backoff.delayMilliseconds(attempt: failedConnections)
        reconnectTimer = reactor.schedule(after: .milliseconds(delay)) { [self] in connect() }
    }

    // MARK: Sending

    private var hasWaiting: Bool { next < waiting.count }

    private func submitWaiting() {
        guard let connection, !halted else { return }
        var submitted = false
        while hasWaiting, connection.freeStreamSlots > 0 {
            let index = waiting[next]
            let request = requests[index]
            var headers = request.headers
            let token = target.tokens?.current
            if let token {
                headers.insert(H2Header("authorization", "bearer " + token.jwt, indexing: .neverIndexed), at: 0)
            }
            let tag = nextTag
            guard connection.submit(path: request.path, headers: headers, body: request.body, tag: tag,
                                    method: request.method) else { break }
            nextTag += 1
            next += 1
            inFlight[tag] = Sent(index: index, token: token)
            submitted = true
        }
        if next == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            next = 0
        }
        if submitted { connection.flush() }
    }

    /// `index` goes out again: now, or after the backoff of its attempt.
    private func again(_ index: Int, afterBackoff: Bool) {
        guard !halted else { return finishIfDone() }
        guard afterBackoff else {
            waiting.append(index)
            return sendOrConnect()
        }
        let delay = backoff.delayMilliseconds(attempt: max(1, attempts[index]))
        retryTimers[index] = reactor.schedule(after: .milliseconds(delay)) { [self] in
            retryTimers[index] = nil
            guard !halted else { return finishIfDone() }
            waiting.append(index)
            sendOrConnect()
        }
    }

    private func sendOrConnect() {
        if connection == nil {
            if reconnectTimer == nil { connect() }  // unless a lookup is under way already
        } else {
            submitWaiting()
        }
    }

    // MARK: Answers

    private func answered(_ response: H2Response, _ sent: Sent) {
        let index = sent.index
        attempts[index] += 1
        if (200...299).contains(response.status) {
            return final(index, .accepted(status: response.status, channelID: response.apnsID, body: response.body,
                                          afterLoss: lostBefore[index]))
        }
        let reasonText = Response(status: response.status, apnsID: nil, body: response.body).reasonText
        let disposition = Disposition(status: response.status, reason: reasonText.flatMap { Reason(name: $0) })
        if disposition == .refreshToken, let tokens = target.tokens, let token = sent.token {
            if case .clockSuspect(let age) = tokens.expired(token) {
                return end(ManagementStop(message: "APNs keeps refusing provider tokens as expired that this machine signed "
                                          + "\(age / 60) minutes ago or less: check this machine's clock (NTP)"))
            }
            return attempts[index] < policy.maxAttempts ? again(index, afterBackoff: false)
                : final(index, .refused(status: response.status, reason: reasonText, afterLoss: lostBefore[index]))
        }
        if disposition == .credentialsRefused || response.status == 403 {
            return end(ManagementStop(message: "APNs refused the credentials: "
                                      + ChannelsReport.refusal(status: response.status, reason: reasonText)))
        }
        let retryable: Bool = if case .retryLater = disposition { true } else { response.status == 429 || response.status >= 500 }
        if retryable && attempts[index] < policy.maxAttempts { return again(index, afterBackoff: true) }
        final(index, .refused(status: response.status, reason: reasonText, afterLoss: lostBefore[index]))
    }

    private func final(_ index: Int, _ answer: ManagementAnswer) {
        if stopAtFirstRefusal && !answer.isAccepted { halt() }
        onAnswer(index, answer)
        if !halted { submitWaiting() }
        finishIfDone()
    }

    /// Nothing more goes out; what is in flight still answers.
    private func halt() {
        halted = true
        waiting.removeAll()
        next = 0
        for timer in retryTimers.values { reactor.cancel(timer) }
        retryTimers.removeAll()
        if let reconnectTimer { reactor.cancel(reconnectTimer) }
        reconnectTimer = nil
    }

    /// The run cannot go on: `stop` is its end (the first one said), once what is in flight answered.
    private func end(_ stop: ManagementStop) {
        if self.stop == nil { self.stop = stop }
        halt()
        finishIfDone()
    }

    private func finishIfDone() {
        guard !finished, inFlight.isEmpty, retryTimers.isEmpty, halted || !hasWaiting else { return }
        finished = true
        connection?.close()
        finish(stop)
    }

    // MARK: ClientConnectionDelegate

    func connectionDidBecomeReady(_ connection: ClientConnection) { submitWaiting() }

    func connectionHasFreeSlots(_ connection: ClientConnection) { submitWaiting() }

    func connection(_ connection: ClientConnection, didReceive response: H2Response) {
        guard let sent = inFlight.removeValue(forKey: response.tag) else { return }
        failedConnections = 0
        answered(response, sent)
    }

    func connection(_ connection: ClientConnection, didNotProcess tag: UInt64, cause: H2NotProcessedCause) {
        guard let sent = inFlight.removeValue(forKey: tag) else { return }
        unprocessed[sent.index] += 1
        if unprocessed[sent.index] > 4 * policy.maxAttempts {
            return final(sent.index, .unanswered(detail: "APNs did not take it on \(unprocessed[sent.index]) tries"))
        }
        // Sent again on this connection while it takes requests, else on the next one.
        again(sent.index, afterBackoff: false)
    }

    func connection(_ connection: ClientConnection, lost tag: UInt64, cause: H2LossCause) {
        guard let sent = inFlight.removeValue(forKey: tag) else { return }
        attempts[sent.index] += 1
        lostBefore[sent.index] = true
        if halted || attempts[sent.index] >= policy.maxAttempts {
            let detail = switch cause {
            case .streamReset(let code): "the stream was reset (HTTP/2 error \(code))"
            case .connectionLost: "the connection was lost with it in flight"
            }
            return final(sent.index, .unanswered(detail: "\(detail), \(attempts[sent.index]) times"))
        }
        again(sent.index, afterBackoff: true)
    }

    func connection(_ connection: ClientConnection, didReceiveGoaway goaway: H2GoAway) {}

    func connection(_ connection: ClientConnection, didCloseWith error: ClientConnectionError?) {
        guard self.connection === connection else { return }
        self.connection = nil
        guard !finished else { return }
        guard !halted else { return finishIfDone() }
        if connection.responsesReceived == 0 {
            return connectionFailed(error?.description ?? "\(connection.peer) closed the connection before answering",
                                    configurationError: error?.isConfigurationError ?? false)
        }
        // It served: a new one for what is left (after a GOAWAY, or a reset of an idle connection).
        if hasWaiting { connect() }
    }
}
