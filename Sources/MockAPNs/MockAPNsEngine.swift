import APNs
import Transport

/// The mock on its reactor thread: the `H2ServerDelegate` that owns the service, the statistics,
/// the record file, and hands each connection a `MockAPNsConnection`.
final class MockAPNsEngine: H2ServerDelegate {
    let service: MockAPNsService
    var configuration: MockAPNsConfiguration { service.configuration }
    var stats = MockAPNsStats()
    let recorder: MockAPNsRecorder?
    private var live: [ObjectIdentifier: H2ServerConnection] = [:]
    private var random: UInt64
    private let finished: @Sendable (MockAPNsStats, String?) -> Void

    /// `finished` receives the final counters and any record-file failure when the server stops.
    init(configuration: MockAPNsConfiguration, recorder: MockAPNsRecorder?,
         finished: @escaping @Sendable (MockAPNsStats, String?) -> Void) {
        service = MockAPNsService(configuration: configuration)
        self.recorder = recorder
        self.finished = finished
        random = MockFaultDraw.mix(configuration.seed ^ UInt64(bitPattern: unixMilliseconds()))
    }

    func connectionOpened(_ connection: H2ServerConnection) -> any H2ServerConnectionHandler {
        stats.connections += 1
        live[ObjectIdentifier(connection)] = connection
        return MockAPNsConnection(engine: self)
    }

    func connectionClosed(_ connection: H2ServerConnection) {
        if live.removeValue(forKey: ObjectIdentifier(connection)) != nil { absorb(connection) }
    }

    func serverStopping() {
        for connection in live.values { absorb(connection) }
        live.removeAll()
        recorder?.close()
        finished(stats, recorder?.failure?.description)
    }

    /// The statistics now, with the frame counters of connections still open.
    func snapshot() -> MockAPNsStats {
        var result = stats
        for connection in live.values {
            result.priorityFramesReceived += connection.priorityFramesReceived
            result.maxConcurrentStreamsSeen = max(result.maxConcurrentStreamsSeen, connection.maxConcurrentStreamsSeen)
        }
        return result
    }

    private func absorb(_ connection: H2ServerConnection) {
        stats.priorityFramesReceived += connection.priorityFramesReceived
        stats.maxConcurrentStreamsSeen = max(stats.maxConcurrentStreamsSeen, connection.maxConcurrentStreamsSeen)
    }

    func serverStarted(_ timers: H2ServerTimers) {
        if recorder != nil { armRecordFlush(timers) }
    }

    /// The record file gets a zstd frame at least every second (none when nothing was recorded).
    private func armRecordFlush(_ timers: H2ServerTimers) {
        timers.schedule(after: .seconds(1)) { [weak self] in
            guard let self else { return }
            self.recorder?.flush()
            self.armRecordFlush(timers)
        }
    }

    /// A random lowercase UUID (version 4 layout) for requests without `apns-id`, as the answer's
    /// never-indexed `apns-id` field (bytes kept inline: no `String` per answer).
    func makeAPNsID() -> H2ResponseField {
        random = MockFaultDraw.mix(random)
        var high = random
        random = MockFaultDraw.mix(random)
        var low = random
        // The digits are the words' nibbles from the lowest up; the version nibble (4) and the
        // variant bits (10xx) are set in place.
        high = high & ~(0xf << 48) | (4 << 48)
        low = low & ~0xf | (8 | (low & 3))
        var field = H2ResponseField(name: "apns-id", neverIndexed: true)
        Self.appendHexDigits(8, of: &high, to: &field)
        field.append(UInt8(ascii: "-"))
        Self.appendHexDigits(4, of: &high, to: &field)
        field.append(UInt8(ascii: "-"))
        Self.appendHexDigits(4, of: &high, to: &field)
        field.append(UInt8(ascii: "-"))
        Self.appendHexDigits(4, of: &low, to: &field)
        field.append(UInt8(ascii: "-"))
        Self.appendHexDigits(12, of: &low, to: &field)
        return field
    }

    private static func appendHexDigits(_ count: Int, of word: inout UInt64, to field: inout H2ResponseField) {
        for _ in 0..<count {
            field.append(hexDigit(UInt8(truncatingIfNeeded: word) & 0x0f))
            word >>= 4
        }
    }

    /// A latency for one answer: `--latency-ms` plus a uniform jitter up to `--latency-jitter-ms`.
    func latency() -> Duration? {
        let base = configuration.latencyMilliseconds
        let jitter = configuration.latencyJitterMilliseconds
        guard base > 0 || jitter > 0 else { return nil }
        var extra = 0
        if jitter > 0 {
            random = MockFaultDraw.mix(random)
            extra = Int(random % UInt64(jitter + 1))
        }
        return .milliseconds(base + extra)
    }
}

/// One connection's APNs behaviour: validation through the service, the stream ramp, and the
/// per-connection faults (GOAWAY, reset, stall after N requests; throttling after errors).
final class MockAPNsConnection: H2ServerConnectionHandler {
    private unowned let engine: MockAPNsEngine
    private var auth = MockConnectionAuth()
    private var requests = 0
    private var raised = false
    private var throttled = false
    /// Stalled or about to be reset: later requests are left unanswered.
    private var stalled = false
    /// Set once GOAWAY went out: streams above it are not processed (the client resends them).
    private var goawayLastStreamID: Int32?
    // The configuration's per-connection knobs, copied once: reading `engine.configuration` per
    // request copied the whole configuration (retaining each of its collections).
    private let goawayAfter: Int?
    private let stallAfter: Int?
    private let resetAfter: Int?
    private let maxStreams: Int
    private let throttleAfterErrors: Bool

    init(engine: MockAPNsEngine) {
        self.engine = engine
        let configuration = engine.configuration
        goawayAfter = configuration.goawayAfter
        stallAfter = configuration.stallAfter
        resetAfter = configuration.resetAfter
        maxStreams = configuration.maxStreams
        throttleAfterErrors = configuration.throttleAfterErrors
    }

    func received(_ request: H2ServerRequest, on connection: H2ServerConnection) {
        let engine = self.engine  // one strong reference for the whole request, not one per use
        engine.stats.requests += 1
        if stalled { return }
        if let last = goawayLastStreamID, request.streamID > last { return }
        requests += 1
        let answer = engine.service.answer(method: request.method, path: request.path, headers: request.headers,
                                           body: request.body, bodyLength: request.bodyLength,
                                           connection: &auth, now: unixSeconds())
        let apnsID = answer.apnsID.map { MockAPNsID.echoed($0) } ?? .field(engine.makeAPNsID())
        if let recorder = engine.recorder {
            recorder.record(timeMilliseconds: unixMilliseconds(), connection: connection.id,
                            stream: request.streamID, deviceToken: answer.deviceToken, apnsID: apnsID.text,
                            status: answer.status, reason: answer.isRefusal ? "RefusedStream" : answer.reason)
        }
        adjustStreams(after: answer, on: connection)
        if requests == goawayAfter {
            goawayLastStreamID = request.streamID
            connection.goaway(lastStreamID: request.streamID, debugData: "{\"reason\":\"Shutdown\"}")
        }
        if answer.isRefusal {
            engine.stats.refusedStreams += 1
            connection.refuse(streamID: request.streamID)
        } else {
            engine.stats.count(status: answer.status, reason: answer.reason)
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
        if let delay = engine.latency() {
            connection.schedule(after: delay) { [weak connection] in
                guard let connection else { return }
                apnsID.respond(streamID: streamID, status: status, body: body, on: connection)
            }
        } else {
            apnsID.respond(streamID: streamID, status: status, body: body, on: connection)
        }
    }

    func connectionClosed(_ connection: H2ServerConnection) {
        engine.connectionClosed(connection)
    }
}

/// The `apns-id` of an answer: one the mock made (inline bytes), or the request's own, echoed.
enum MockAPNsID {
    case field(H2ResponseField)
    /// Longer than an inline field holds (a malformed `apns-id` is echoed as it came).
    case text(String)

    static func echoed(_ value: String) -> MockAPNsID {
        H2ResponseField(name: "apns-id", value: value, neverIndexed: true).map { .field($0) } ?? .text(value)
    }

    var text: String {
        switch self {
        case .field(let field): field.valueText
        case .text(let text): text
        }
    }

    func respond(streamID: Int32, status: Int, body: [UInt8], on connection: H2ServerConnection) {
        switch self {
        case .field(let field):
            connection.respond(streamID: streamID, status: status, field: field, body: body)
        case .text(let text):
            connection.respond(streamID: streamID, status: status,
                               headers: [H2Header("apns-id", text, indexing: .neverIndexed)], body: body)
        }
    }
}
