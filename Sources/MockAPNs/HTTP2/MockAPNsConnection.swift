import APNs
import Transport

/// One connection's APNs behaviour: validation by the rules, the stream ramp, and the
/// per-connection faults (GOAWAY, reset, stall after N requests; throttling after errors).
final class MockAPNsConnection: H2ServerConnectionHandler {
    private unowned let server: MockAPNsServerDelegate
    @exclusivity(unchecked) private var auth = MockConnectionAuth()
    @exclusivity(unchecked) private var requests = 0
    @exclusivity(unchecked) private var raised = false
    @exclusivity(unchecked) private var throttled = false
    /// Stalled or about to be reset: later requests are left unanswered.
    @exclusivity(unchecked) private var stalled = false
    /// Set once GOAWAY went out: streams above it are not processed (the client resends them).
    @exclusivity(unchecked) private var goawayLastStreamID: Int32?
    // The configuration's per-connection knobs, copied once: reading `server.configuration` per
    // request copied the whole configuration (retaining each of its collections).
    private let goawayAfter: Int?
    private let stallAfter: Int?
    private let resetAfter: Int?
    private let maxStreams: Int
    private let throttleAfterErrors: Bool
    private let recordPayloads: Bool
    /// Sandbox: every answer carries `apns-unique-id`.
    private let sandbox: Bool

    init(server: MockAPNsServerDelegate) {
        self.server = server
        let configuration = server.configuration
        goawayAfter = configuration.goawayAfter
        stallAfter = configuration.stallAfter
        resetAfter = configuration.resetAfter
        maxStreams = configuration.maxStreams
        throttleAfterErrors = configuration.throttleAfterErrors
        recordPayloads = configuration.recordPayloads
        sandbox = configuration.environment.sendsUniqueIDs
    }

    func received(_ request: H2ServerRequest, on connection: H2ServerConnection) {
        let server = self.server  // one strong reference for the whole request, not one per use
        server.stats.requests += 1
        if stalled { return }
        if let last = goawayLastStreamID, request.streamID > last { return }
        requests += 1
        if server.role.routesToBroadcastSide(request.path) { return receivedOnBroadcastSide(request, on: connection) }
        let answer = server.rules.answer(method: request.method, path: request.path, headers: request.headers,
                                         body: request.body, bodyLength: request.bodyLength,
                                         connection: &auth, now: unixSeconds())
        let apnsID = answer.apnsID.map { MockAPNsID.echoed($0) } ?? .field(MockAPNsID.generated(using: &server.random))
        if let recorder = server.recorder {
            recorder.record(timeMilliseconds: unixMilliseconds(), connection: connection.id,
                            stream: request.streamID, deviceToken: answer.deviceToken, apnsID: apnsID.text,
                            status: answer.status, reason: answer.isRefusal ? "RefusedStream" : answer.reason,
                            keyID: answer.key.map { server.rules.keyID($0) },
                            payload: server.configuration.recordPayloads ? request.body : nil)
        }
        if settle(status: answer.status, reason: answer.reason, passedAuthorization: answer.passedAuthorization,
                  streamID: request.streamID, on: connection) {
            send(answer, apnsID: apnsID, streamID: request.streamID, on: connection)
        }
        stallOrResetIfDue(on: connection)
    }

    /// A broadcast or channel request (`MockBroadcastRules`), with the same per-connection faults,
    /// stream ramp, latency and record as a device push.
    private func receivedOnBroadcastSide(_ request: H2ServerRequest, on connection: H2ServerConnection) {
        let server = self.server
        let answer = server.broadcastRules.answer(method: request.method, path: request.path, headers: request.headers,
                                                  body: request.body, bodyLength: request.bodyLength,
                                                  connection: &auth, now: unixSeconds(), random: &server.random)
        let requestID = MockBroadcastReply.requestID(of: answer, random: &server.random)
        if let recorder = server.recorder {
            recorder.recordBroadcast(timeMilliseconds: unixMilliseconds(), connection: connection.id,
                                     stream: request.streamID, kind: answer.kind.rawValue, bundleID: answer.bundleID,
                                     channelID: answer.channelID, requestID: requestID.text, status: answer.status,
                                     reason: answer.isRefusal ? "RefusedStream" : answer.reasonText,
                                     keyID: answer.key.map { server.rules.keyID($0) },
                                     payload: recordPayloads ? request.body : nil)
        }
        if settle(status: answer.status, reason: answer.reasonText, passedAuthorization: answer.passedAuthorization,
                  streamID: request.streamID, on: connection) {
            let reply = MockBroadcastReply(answer, requestID: requestID, random: &server.random,
                                           sendsUniqueID: answer.status == 200 && answer.kind == .broadcast || sandbox)
            let streamID = request.streamID
            if let delay = server.latency.draw(using: &server.random) {
                connection.schedule(after: delay) { [weak connection] in
                    guard let connection else { return }
                    reply.send(streamID: streamID, on: connection)
                }
            } else {
                reply.send(streamID: streamID, on: connection)
            }
        }
        stallOrResetIfDue(on: connection)
    }

    /// What every answer takes before it is sent: the stream ramp (or throttle), the GOAWAY due
    /// after this request, and the statistics, or the refusal of the stream (status 0). True when
    /// the answer is to be sent.
    private func settle(status: Int, reason: String?, passedAuthorization: Bool, streamID: Int32,
                        on connection: H2ServerConnection) -> Bool {
        adjustStreams(status: status, passedAuthorization: passedAuthorization, on: connection)
        goawayIfDue(streamID, on: connection)
        if status == 0 {
            server.stats.refusedStreams += 1
            connection.refuse(streamID: streamID)
            return false
        }
        server.stats.count(status: status, reason: reason)
        return true
    }

    private func goawayIfDue(_ streamID: Int32, on connection: H2ServerConnection) {
        if requests == goawayAfter {
            goawayLastStreamID = streamID
            connection.goaway(lastStreamID: streamID, debugData: "{\"reason\":\"Shutdown\"}")
        }
    }

    private func stallOrResetIfDue(on connection: H2ServerConnection) {
        if requests == stallAfter {
            stalled = true
            connection.stall()
        }
        if requests == resetAfter {
            // Later requests of the same read are ignored; the reset comes on the next loop turn,
            // once this answer has been written.
            stalled = true
            connection.schedule(after: .zero) { [weak connection] in connection?.reset() }
        }
    }

    private func adjustStreams(status: Int, passedAuthorization: Bool, on connection: H2ServerConnection) {
        if throttleAfterErrors, !throttled, status >= 400, status != 410 {
            throttled = true
            connection.updateMaxConcurrentStreams(1)
            return
        }
        if !raised, !throttled, passedAuthorization {
            raised = true
            connection.updateMaxConcurrentStreams(maxStreams)
        }
    }

    private func send(_ answer: MockAnswer, apnsID: MockAPNsID, streamID: Int32, on connection: H2ServerConnection) {
        var body: [UInt8] = []
        if let reason = answer.reason, answer.status != 200 {
            body = Response.errorBody(reasonText: reason, timestamp: answer.timestamp)
        }
        let status = answer.status
        let uniqueID = sandbox ? MockAPNsID.uniqueID(using: &server.random) : nil
        if let delay = server.latency.draw(using: &server.random) {
            connection.schedule(after: delay) { [weak connection] in
                guard let connection else { return }
                apnsID.respond(streamID: streamID, status: status, body: body, uniqueID: uniqueID, on: connection)
            }
        } else {
            apnsID.respond(streamID: streamID, status: status, body: body, uniqueID: uniqueID, on: connection)
        }
    }

    func connectionClosed(_ connection: H2ServerConnection) {
        server.connectionClosed(connection)
    }
}
