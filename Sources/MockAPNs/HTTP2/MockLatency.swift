/// How long an answer waits before it is sent: `--latency-ms` plus a uniform jitter up to
/// `--latency-jitter-ms` (nil: at once, with no timer).
struct MockLatency {
    let baseMilliseconds: Int
    let jitterMilliseconds: Int

    init(configuration: MockAPNsConfiguration) {
        baseMilliseconds = configuration.latencyMilliseconds
        jitterMilliseconds = configuration.latencyJitterMilliseconds
    }

    func draw(using random: inout MockRandom) -> Duration? {
        guard baseMilliseconds > 0 || jitterMilliseconds > 0 else { return nil }
        var extra = 0
        if jitterMilliseconds > 0 { extra = Int(random.next() % UInt64(jitterMilliseconds + 1)) }
        return .milliseconds(baseMilliseconds + extra)
    }
}
