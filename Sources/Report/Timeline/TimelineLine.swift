import Foundation
import Pipeline

/// One line of timeline.jsonl.zst, the run's sidecar beside its result log (docs/file-formats.md,
/// "timeline.jsonl.zst"): a second of counters and a latency histogram, or an event (a run's start, a stop, a
/// run's end). Times are wall-clock Unix seconds, so the parts a resume appends and the files of
/// several shards line up on one axis; histograms rather than percentiles, so they merge exactly.
public enum TimelineLine: Sendable, Equatable {
    case second(TimelineSecond)
    case event(TimelineEvent)

    /// The line as written (with its newline).
    public var json: [UInt8] {
        switch self {
        case .second(let second): second.json
        case .event(let event): event.json
        }
    }

    /// A line read back; nil for one that is not a timeline line (the page skips it).
    public static func parse(_ bytes: some Collection<UInt8>) -> TimelineLine? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              let time = (object["t"] as? NSNumber)?.doubleValue else { return nil }
        if let kind = object["event"] as? String {
            return .event(TimelineEvent(time: time, kind: kind, detail: object["detail"] as? String ?? ""))
        }
        return TimelineSecond(object, time: time).map { .second($0) }
    }
}

/// Something that happened at one moment: `start` (a run began sending; `detail` its version,
/// connections and endpoints), `stop` (the run began stopping; `detail` the cause), `end` (the run
/// finished; `detail` its exit status).
public struct TimelineEvent: Sendable, Equatable {
    public var time: Double
    public var kind: String
    public var detail: String

    public init(time: Double, kind: String, detail: String) {
        self.time = time
        self.kind = kind
        self.detail = detail
    }

    var json: [UInt8] {
        var out: [UInt8] = Array("{\"t\": ".utf8)
        JSONText.appendDecimal(time, to: &out)
        out.append(contentsOf: ", \"event\": ".utf8)
        JSONText.appendString(kind, to: &out)
        out.append(contentsOf: ", \"detail\": ".utf8)
        JSONText.appendString(detail, to: &out)
        out.append(contentsOf: "}\n".utf8)
        return out
    }
}

/// One second's counters (or a little more: `seconds`), ending at `time`.
public struct TimelineSecond: Sendable, Equatable {
    public var time: Double
    public var seconds: Double
    /// Rows recorded in it, by outcome.
    public var outcomes = OutcomeCounts()
    public var requests = 0
    public var retries = 0
    public var tooManyRequests = 0
    /// 403 ExpiredProviderToken answers: each refreshes the provider token (at most once).
    public var tokenRefreshes = 0
    public var goaways = 0
    public var streamResets = 0
    public var lostWithConnection = 0
    public var connectionsOpened = 0
    /// Connections ended, by `ConnectionEnd`'s index.
    public var connectionsClosed = [Int](repeating: 0, count: ConnectionEnd.allCases.count)
    /// Gauges at its end.
    public var connectionsOpen = 0
    public var inFlight = 0
    public var latency = LatencyBuckets()

    public init(time: Double, seconds: Double) {
        self.time = time
        self.seconds = seconds
    }

    /// A recorder's second.
    init(_ second: RunRecorder.Second) {
        self.init(time: second.endedAtUnix, seconds: second.seconds)
        outcomes = second.outcomes
        let events = second.events
        (requests, retries, tooManyRequests) = (events.requests, events.retries, events.tooManyRequests)
        (tokenRefreshes, goaways, streamResets) = (events.expiredProviderTokens, events.goaways, events.streamResets)
        (lostWithConnection, connectionsOpened) = (events.lostWithConnection, events.connectionsOpened)
        connectionsClosed = events.connectionsClosed
        (connectionsOpen, inFlight) = (events.connectionsOpen, events.inFlight)
        latency = second.latency
    }

    /// Rows APNs answered for good in it (delivered, unregistered, bad_token, failed).
    public var answered: Int { outcomes[.delivered] + outcomes[.unregistered] + outcomes[.badToken] + outcomes[.failed] }
    /// Rows that ended without delivery in it.
    public var errors: Int { outcomes.total - outcomes[.delivered] }

    private static let counterKeys = ["requests", "retries", "too_many_requests", "token_refreshes", "goaways",
                                      "stream_resets", "lost_with_connection", "connections_opened",
                                      "connections_open", "in_flight"]
    private var counterValues: [Int] {
        [requests, retries, tooManyRequests, tokenRefreshes, goaways, streamResets, lostWithConnection,
         connectionsOpened, connectionsOpen, inFlight]
    }

    var json: [UInt8] {
        var out: [UInt8] = Array("{\"t\": ".utf8)
        JSONText.appendDecimal(time, to: &out)
        out.append(contentsOf: ", \"s\": ".utf8)
        JSONText.appendDecimal(seconds, to: &out)
        out.append(contentsOf: ", \"outcomes\": {".utf8)
        var first = true
        for outcome in Outcome.allCases where outcomes[outcome] != 0 {
            out.append(contentsOf: "\(first ? "" : ", ")\"\(outcome.rawValue)\": \(outcomes[outcome])".utf8)
            first = false
        }
        out.append(contentsOf: "}".utf8)
        for (key, value) in zip(Self.counterKeys, counterValues) {
            out.append(contentsOf: ", \"\(key)\": \(value)".utf8)
        }
        out.append(contentsOf: ", \"connections_closed\": {".utf8)
        first = true
        for end in ConnectionEnd.allCases where connectionsClosed[end.rawValue] != 0 {
            out.append(contentsOf: "\(first ? "" : ", ")\"\(end.label)\": \(connectionsClosed[end.rawValue])".utf8)
            first = false
        }
        out.append(contentsOf: "}, \"latency\": [".utf8)
        out.append(contentsOf: latency.counts.map(String.init).joined(separator: ", ").utf8)
        out.append(contentsOf: "], \"latency_sum_s\": ".utf8)
        JSONText.appendDecimal(latency.sumSeconds, to: &out)
        out.append(contentsOf: "}\n".utf8)
        return out
    }

    init?(_ object: [String: Any], time: Double) {
        self.init(time: time, seconds: (object["s"] as? NSNumber)?.doubleValue ?? 1)
        let outcomeObject = object["outcomes"] as? [String: Any] ?? [:]
        for outcome in Outcome.allCases { outcomes[outcome] = (outcomeObject[outcome.rawValue] as? NSNumber)?.intValue ?? 0 }
        let values = Self.counterKeys.map { (object[$0] as? NSNumber)?.intValue ?? 0 }
        (requests, retries, tooManyRequests, tokenRefreshes, goaways) = (values[0], values[1], values[2], values[3], values[4])
        (streamResets, lostWithConnection, connectionsOpened) = (values[5], values[6], values[7])
        (connectionsOpen, inFlight) = (values[8], values[9])
        let closed = object["connections_closed"] as? [String: Any] ?? [:]
        for end in ConnectionEnd.allCases { connectionsClosed[end.rawValue] = (closed[end.label] as? NSNumber)?.intValue ?? 0 }
        let counts = (object["latency"] as? [Any] ?? []).map { ($0 as? NSNumber)?.intValue ?? 0 }
        // A histogram of another shape (a later version's bounds) is left out rather than misread.
        if counts.count == latency.counts.count { latency.counts = counts }
        latency.sumSeconds = (object["latency_sum_s"] as? NSNumber)?.doubleValue ?? 0
    }

    /// Adds another second's counters (the same second of another shard, or a bin of seconds).
    mutating func addCounters(_ other: TimelineSecond) {
        combineCounters(other, +)
        latency.sumSeconds += other.latency.sumSeconds
    }

    /// Takes another's counters away (what a bin's share of a line leaves of the line).
    mutating func subtractCounters(_ other: TimelineSecond) {
        combineCounters(other, -)
        latency.sumSeconds -= other.latency.sumSeconds
    }

    /// Its counters (and latency histogram) times `fraction`, each rounded to a whole count: the
    /// share of a line up to a moment within it.
    func scaled(by fraction: Double) -> TimelineSecond {
        var scaled = self
        scaled.combineCounters(self) { _, count in Int((Double(count) * fraction).rounded()) }
        scaled.latency.sumSeconds = latency.sumSeconds * fraction
        return scaled
    }

    /// Each counter (not the gauges, not the latency sum) made `combine(own, other's)`.
    private mutating func combineCounters(_ other: TimelineSecond, _ combine: (Int, Int) -> Int) {
        for outcome in Outcome.allCases { outcomes[outcome] = combine(outcomes[outcome], other.outcomes[outcome]) }
        requests = combine(requests, other.requests)
        retries = combine(retries, other.retries)
        tooManyRequests = combine(tooManyRequests, other.tooManyRequests)
        tokenRefreshes = combine(tokenRefreshes, other.tokenRefreshes)
        goaways = combine(goaways, other.goaways)
        streamResets = combine(streamResets, other.streamResets)
        lostWithConnection = combine(lostWithConnection, other.lostWithConnection)
        connectionsOpened = combine(connectionsOpened, other.connectionsOpened)
        for index in connectionsClosed.indices { connectionsClosed[index] = combine(connectionsClosed[index], other.connectionsClosed[index]) }
        for index in latency.counts.indices { latency.counts[index] = combine(latency.counts[index], other.latency.counts[index]) }
    }
}

extension TimelineEvent {
    /// The sidecar's record of a run's start: what ran, over how many connections, to where.
    static func start(_ configuration: CampaignConfiguration) -> TimelineEvent {
        TimelineEvent(time: (Date().timeIntervalSince1970 * 1000).rounded(.down) / 1000, kind: "start",
                      detail: "apns-bulk \(Version.current), \(configuration.connections) connections to "
                          + configuration.endpoints.map(\.description).joined(separator: ", "))
    }
}
