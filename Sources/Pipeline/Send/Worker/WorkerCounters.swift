import Transport

/// What one reactor thread saw of the run's requests and connections since it started: plain
/// integers on that thread (no lock, no atomic on the per-row path), handed to the `RunRecorder`
/// by the worker about once a second. Counts only grow; the two gauges are the values when handed.
public struct WorkerCounters: Sendable {
    /// Requests submitted (every attempt, resends included).
    public var requests = 0
    /// Rows put back for another attempt (429, 5xx, a refreshed token, a lost request).
    public var retries = 0
    /// Answers with status 429 (TooManyRequests, TooManyProviderTokenUpdates).
    public var tooManyRequests = 0
    /// 403 ExpiredProviderToken answers: each makes the shared token source refresh at most once.
    public var expiredProviderTokens = 0
    /// GOAWAY frames received.
    public var goaways = 0
    /// Requests whose stream the server reset (`H2LossCause.streamReset`).
    public var streamResets = 0
    /// Requests lost with their connection (`H2LossCause.connectionLost`).
    public var lostWithConnection = 0
    /// Requests certainly not processed (REFUSED_STREAM, above a GOAWAY's last stream), sent again.
    public var notProcessed = 0
    /// Connections that got the server's SETTINGS (became ready).
    public var connectionsOpened = 0
    /// Connections that ended, by `ConnectionEnd`'s index.
    public var connectionsClosed = [Int](repeating: 0, count: ConnectionEnd.allCases.count)
    /// Gauge: ready connections when handed over.
    public var connectionsOpen = 0
    /// Gauge: requests in flight when handed over.
    public var inFlight = 0

    public init() {}

    /// The sum of every worker's counters (gauges add up too: they are per thread).
    static func + (lhs: WorkerCounters, rhs: WorkerCounters) -> WorkerCounters {
        var sum = lhs
        sum.requests += rhs.requests
        sum.retries += rhs.retries
        sum.tooManyRequests += rhs.tooManyRequests
        sum.expiredProviderTokens += rhs.expiredProviderTokens
        sum.goaways += rhs.goaways
        sum.streamResets += rhs.streamResets
        sum.lostWithConnection += rhs.lostWithConnection
        sum.notProcessed += rhs.notProcessed
        sum.connectionsOpened += rhs.connectionsOpened
        for index in sum.connectionsClosed.indices { sum.connectionsClosed[index] += rhs.connectionsClosed[index] }
        sum.connectionsOpen += rhs.connectionsOpen
        sum.inFlight += rhs.inFlight
        return sum
    }

    /// What happened since `earlier` (counters only; the gauges are this one's).
    func since(_ earlier: WorkerCounters) -> WorkerCounters {
        var delta = self
        delta.requests -= earlier.requests
        delta.retries -= earlier.retries
        delta.tooManyRequests -= earlier.tooManyRequests
        delta.expiredProviderTokens -= earlier.expiredProviderTokens
        delta.goaways -= earlier.goaways
        delta.streamResets -= earlier.streamResets
        delta.lostWithConnection -= earlier.lostWithConnection
        delta.notProcessed -= earlier.notProcessed
        delta.connectionsOpened -= earlier.connectionsOpened
        for index in delta.connectionsClosed.indices { delta.connectionsClosed[index] -= earlier.connectionsClosed[index] }
        return delta
    }

    /// Counts a connection's end under its cause.
    mutating func connectionClosed(_ error: ClientConnectionError?) {
        connectionsClosed[ConnectionEnd(error).rawValue] += 1
    }
}

/// Why a connection ended, as the `cause` label of `apns_bulk_connections_closed_total`.
public enum ConnectionEnd: Int, CaseIterable, Sendable {
    /// Closed by us, or after the server's GOAWAY drained cleanly.
    case orderly
    case connectFailed
    case tls
    case protocolError
    case peerClosed
    case pingTimeout
    case responseTimeout
    /// The CONNECT proxy failed the tunnel.
    case proxy

    init(_ error: ClientConnectionError?) {
        switch error {
        case nil: self = .orderly
        case .connect: self = .connectFailed
        case .tls: self = .tls
        case .protocolError: self = .protocolError
        case .peerClosed: self = .peerClosed
        case .pingTimeout: self = .pingTimeout
        case .responseTimeout: self = .responseTimeout
        case .proxy: self = .proxy
        }
    }

    /// The label value.
    public var label: String {
        switch self {
        case .orderly: "orderly"
        case .connectFailed: "connect_failed"
        case .tls: "tls"
        case .protocolError: "protocol_error"
        case .peerClosed: "peer_closed"
        case .pingTimeout: "ping_timeout"
        case .responseTimeout: "response_timeout"
        case .proxy: "proxy"
        }
    }
}
