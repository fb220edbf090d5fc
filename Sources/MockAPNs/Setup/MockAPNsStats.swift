import Foundation

/// What a mock server saw, as counters of bounded size (statuses and reasons are few; scripted
/// reasons beyond `reasonLimit` distinct names count under "other").
public struct MockAPNsStats: Sendable, Equatable {
    /// Complete requests received (answered, refused or dropped by GOAWAY).
    public var requests = 0
    /// Answers by HTTP status (refused streams are counted in `refusedStreams` instead).
    public var byStatus: [Int: Int] = [:]
    /// Error answers by reason.
    public var byReason: [String: Int] = [:]
    /// Streams refused with RST_STREAM(REFUSED_STREAM) by `--refuse-streams`.
    public var refusedStreams = 0
    /// Connections accepted (TLS completed).
    public var connections = 0
    /// The most streams open at once on one connection.
    public var maxConcurrentStreamsSeen = 0
    /// PRIORITY frames (and HEADERS with priority) received; an APNs client should send none.
    public var priorityFramesReceived = 0

    static let reasonLimit = 100

    /// All counts zero.
    public init() {}

    /// Adds another listener's counters (the management listener's) to these.
    mutating func add(_ other: MockAPNsStats) {
        requests += other.requests
        for (status, count) in other.byStatus { byStatus[status, default: 0] += count }
        for (reason, count) in other.byReason { byReason[reason, default: 0] += count }
        refusedStreams += other.refusedStreams
        connections += other.connections
        maxConcurrentStreamsSeen = max(maxConcurrentStreamsSeen, other.maxConcurrentStreamsSeen)
        priorityFramesReceived += other.priorityFramesReceived
    }

    mutating func count(status: Int, reason: String?) {
        byStatus[status, default: 0] += 1
        guard let reason else { return }
        if byReason[reason] != nil || byReason.count < Self.reasonLimit {
            byReason[reason, default: 0] += 1
        } else {
            byReason["other", default: 0] += 1
        }
    }

    /// The JSON of `--stats-out`.
    public func json() -> String {
        let statuses = byStatus.keys.sorted().map { "\"\($0)\":\(byStatus[$0] ?? 0)" }.joined(separator: ",")
        let reasons = byReason.keys.sorted().map { "\(Self.quoted($0)):\(byReason[$0] ?? 0)" }.joined(separator: ",")
        return """
            {"requests":\(requests),"by_status":{\(statuses)},"by_reason":{\(reasons)},\
            "refused_streams":\(refusedStreams),"connections":\(connections),\
            "max_concurrent_streams_seen":\(maxConcurrentStreamsSeen),"priority_frames_received":\(priorityFramesReceived)}

            """
    }

    /// Writes `json()` to `path` (replacing it).
    public func write(to path: String) throws(MockAPNsError) {
        do {
            try Data(json().utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw .flag(name: "--stats-out", value: path, problem: "cannot write the file: \(error.localizedDescription)")
        }
    }

    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += "?"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
