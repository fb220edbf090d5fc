import APNs
import Transport

/// The mock on its reactor thread: the `H2ServerDelegate` that owns the rules, the statistics,
/// the record file and the random stream, and hands each connection a `MockAPNsConnection`.
final class MockAPNsServerDelegate: H2ServerDelegate {
    let rules: MockAPNsRules
    /// Broadcasts and channel management, on the channels both listeners share.
    let broadcastRules: MockBroadcastRules
    /// What this listener serves.
    let role: MockListenerRole
    var configuration: MockAPNsConfiguration { rules.configuration }
    var stats = MockAPNsStats()
    let recorder: MockAPNsRecorder?
    private var live: [ObjectIdentifier: H2ServerConnection] = [:]
    /// `serverStopping` came: the record file is closed, its flush timer stops.
    private var stopped = false
    /// For the `apns-id`s the mock makes and the latency jitter.
    var random: MockRandom
    let latency: MockLatency
    private let finished: @Sendable (MockAPNsStats, String?) -> Void

    /// `finished` receives the final counters and any record-file failure when the server stops.
    init(configuration: MockAPNsConfiguration, recorder: MockAPNsRecorder?, channels: MockChannelStore,
         role: MockListenerRole = .all, finished: @escaping @Sendable (MockAPNsStats, String?) -> Void) {
        rules = MockAPNsRules(configuration: configuration)
        broadcastRules = MockBroadcastRules(rules: rules, channels: channels, role: role)
        self.role = role
        self.recorder = recorder
        self.finished = finished
        random = MockRandom(seed: configuration.seed ^ UInt64(bitPattern: unixMilliseconds()))
        latency = MockLatency(configuration: configuration)
    }

    func connectionOpened(_ connection: H2ServerConnection) -> any H2ServerConnectionHandler {
        stats.connections += 1
        live[ObjectIdentifier(connection)] = connection
        return MockAPNsConnection(server: self)
    }

    func connectionClosed(_ connection: H2ServerConnection) {
        if live.removeValue(forKey: ObjectIdentifier(connection)) != nil { absorb(connection) }
    }

    func serverStopping() {
        stopped = true
        for connection in live.values { absorb(connection) }
        live.removeAll()
        // The management listener stops first; the push listener closes the record they share.
        if role != .management { recorder?.close() }
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
        if recorder != nil, role != .management { armRecordFlush(timers) }
    }

    /// The record file gets a zstd frame at least every second (none when nothing was recorded).
    private func armRecordFlush(_ timers: H2ServerTimers) {
        timers.schedule(after: .seconds(1)) { [weak self] in
            guard let self, !self.stopped else { return }
            self.recorder?.flush()
            self.armRecordFlush(timers)
        }
    }
}
