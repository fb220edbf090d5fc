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

    init(server: MockAPNsServerDelegate) {
        self.server = server
        let configuration = server.configuration
        goawayAfter = configuration.goawayAfter
        stallAfter = configuration.stallAfter
        resetAfter = configuration.resetAfter
        maxStreams = configuration.maxStreams
        throttleAfterErrors = configuration.throttleAfterErrors
    }

    func received(_ request: H2ServerRequest, on connection: H2ServerConnection) {
        let server = self.server  // one strong reference for the whole request, not one per use
        server.stats.requests += 1
        if stalled { return }
        if let last = goawayLastStreamID, request.streamID > last { return }
        requests += 1
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
        adjustStreams(after: answer, on: connection)
        if requests == goawayAfter {
            goawayLastStreamID = request.streamID
            connection.goaway(lastStreamID: request.streamID, debugData: "{\"reason\":\"Shutdown\"}")
        }
        if answer.isRefusal {
            server.stats.refusedStreams += 1
            connection.refuse(streamID: request.streamID)
        } else {
            server.stats.count(status: answer.status, reason: answer.reason)
            send(answer, apnsID: apnsID, streamID: request.streamID, on: connection)
        }
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

    private func adjustStreams(after answer: MockAnswer, on connection: H2ServerConnection) {
        if throttleAfterErrors, !throttled, answer.status >= 400, answer.status != 410 {
            throttled = true
            connection.updateMaxConcurrentStreams(1)
            return
        }
        if !raised, !throttled, answer.passedAuthorization {
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
        let uniqueID = server.configuration.environment.sendsUniqueIDs ? MockAPNsID.uniqueID(using: &server.random) : nil
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
