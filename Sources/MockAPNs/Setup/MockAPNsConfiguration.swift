import APNs
import Transport

/// The MockAPNs module: an APNs emulator on Transport's server side (see docs/ARCHITECTURE.md).
public enum MockAPNsModule {
    /// The module's name, for messages and tests that check what was linked.
    public static let name = "MockAPNs"
}

/// Everything a `MockAPNsServer` does: where it listens, how clients authenticate, which topics
/// it serves, and which faults it injects. Files are read before this value exists (see
/// `MockAPNsFiles`), so starting a server never reads the disk (it writes only `caOutPath`).
public struct MockAPNsConfiguration: Sendable {
    /// How clients prove who they are.
    public enum Authentication: Sendable {
        /// Provider tokens checked by this verifier (`--verify-key-file`, `--key-id`, `--team-id`).
        case token(TokenVerifier)
        /// Provider tokens of several keys (repeated `--verify-key-file`, `--keys-file`), each with
        /// its environment, topics and related key: BadEnvironmentKeyIdInToken, TopicDisallowed
        /// and, per connection, UnrelatedKeyIdInToken follow from them.
        case keys([MockTokenKey])
        /// Provider tokens, but only their presence is checked (no `--verify-key-file`): any
        /// non-empty `bearer` value is accepted and never expires.
        case tokenPresenceOnly
        /// Mutual TLS: clients present a certificate issued by these CAs; `authorization` is ignored.
        case certificate(TLSTrust)
    }

    /// What the mock answers for a device token (`--respond-file`).
    public struct ScriptedAnswer: Sendable, Hashable {
        /// The HTTP status to answer (e.g. 410, 400, 500).
        public var status: Int
        /// The `reason` of the answer's body, any text (APNs' names or not).
        public var reason: String
        /// Answer so for the first `times` attempts of the token, then normally; nil: every attempt.
        public var times: Int?

        /// An answer of `status` and `reason`, for `times` attempts or (nil) for every one.
        public init(status: Int, reason: String, times: Int? = nil) {
            self.status = status
            self.reason = reason
            self.times = times
        }
    }

    /// Where to listen (`--listen`); port 0 picks a free port, read it from the server.
    public var address: SocketAddress = .loopback(port: 0)
    /// The server certificate; `.ephemeral` makes a CA for 127.0.0.1, ::1 and localhost.
    public var identity: H2ServerIdentity = .ephemeral(hosts: ["127.0.0.1", "::1", "localhost"])
    /// Where to write the ephemeral CA's certificate (`--ca-out`).
    public var caOutPath: String?
    /// How clients authenticate (`--verify-key-file` or certificates); any token by default.
    public var authentication: Authentication = .tokenPresenceOnly
    /// Bundle ids served (`--topic`); each push type's suffix of one is allowed too. Empty: any
    /// topic is allowed, and only its suffix is checked against the push type.
    public var topics: Set<String> = []
    /// Dead tokens (lowercase hex) and the 410 timestamp (ms) of each.
    public var unregistered: [String: Int64] = [:]
    /// Scripted answers by device token (lowercase hex), or by channel id (as written) for broadcasts.
    public var scripted: [String: ScriptedAnswer] = [:]
    /// SETTINGS_MAX_CONCURRENT_STREAMS once a connection is authorized (`--max-streams`).
    public var maxStreams = 1000
    /// SETTINGS_MAX_CONCURRENT_STREAMS of a new token-auth connection (`--initial-max-streams`).
    public var initialMaxStreams = 1
    /// Added before each answer (`--latency-ms`): what a real network's round trip costs.
    public var latencyMilliseconds = 0
    /// Up to this much more, at random per answer (`--latency-jitter-ms`).
    public var latencyJitterMilliseconds = 0
    /// Random server errors: (status 500 or 503, rate in 0...1) (`--fail`).
    public var failures: [MockAPNsFailureRate] = []
    /// Rate of 429 TooManyRequests (`--too-many-requests`).
    public var tooManyRequestsRate = 0.0
    /// Rate of RST_STREAM(REFUSED_STREAM) (`--refuse-streams`).
    public var refuseStreamsRate = 0.0
    /// Per connection: GOAWAY / TCP reset / stop reading after its N-th request.
    public var goawayAfter: Int?
    /// See `goawayAfter`: a TCP reset instead of a GOAWAY (`--reset-after`).
    public var resetAfter: Int?
    /// See `goawayAfter`: the connection stops being read, as a hung server (`--stall-after`).
    public var stallAfter: Int?
    /// Drop a connection to one stream after it sent a rejected notification.
    public var throttleAfterErrors = false
    /// Seed of the random faults: a fault is a function of (seed, device token, attempt).
    public var seed: UInt64 = 0
    /// Where to write the counters as JSON when the server stops (`--stats-out`).
    public var statsOutPath: String?
    /// Where to record every request answered, one JSON line each, zstd (`--record-out`).
    public var recordOutPath: String?
    /// The record holds each request's body too (`--record-payloads`): for tests of what was sent.
    public var recordPayloads = false
    /// Provider token verdicts kept (distinct tokens); beyond it the cache starts over.
    public var tokenCacheCapacity = 4096
    /// When the server started, in ms since 1970: the 410 timestamp of unregistered tokens listed
    /// without one (`MockAPNsFiles.unregistered` takes it as its default).
    public var startedAtMilliseconds: Int64 = 0
    /// The environment played (`--environment`): in sandbox every answer carries `apns-unique-id`.
    public var environment: MockAPNsEnvironment = .production
    /// Where channel management listens when it has a listener of its own (`--management-listen`),
    /// as Apple's management hosts are apart from the push hosts; nil: the one listener serves
    /// device pushes, broadcasts and channel management. Port 0 picks a free port.
    public var managementAddress: SocketAddress?
    /// Channels per app the mock keeps (`--max-channels`; Apple's limit by default); one more
    /// create is 400 CannotCreateChannelConfig.
    public var maxChannelsPerApp = BroadcastRules.maxChannelsPerApp
    /// A broadcast to any well-formed channel id is taken as to a channel that stores the most
    /// recent message, created or not: for `broadcast --endpoint mock`, whose embedded mock starts
    /// with no channel. Read and delete still know only the channels created.
    public var admitAnyChannel = false
    /// Apps whose broadcast capability is not enabled (`--broadcast-disabled-app`): their
    /// broadcasts and channel requests are answered 400 FeatureNotEnabled.
    public var broadcastDisabledApps: Set<String> = []

    /// The defaults: loopback, any port, an ephemeral CA, any token, no faults.
    public init() {}

    /// The keys whose tokens are verified; empty when tokens are not verified (or certificates are used).
    public var tokenKeys: [MockTokenKey] {
        switch authentication {
        case .token(let verifier): [MockTokenKey(verifier: verifier)]
        case .keys(let keys): keys
        case .tokenPresenceOnly, .certificate: []
        }
    }

    /// True in certificate mode.
    public var usesCertificates: Bool {
        if case .certificate = authentication { return true }
        return false
    }

    /// The SETTINGS_MAX_CONCURRENT_STREAMS a new connection starts with.
    public var startingMaxStreams: Int { usesCertificates ? maxStreams : initialMaxStreams }

    /// Whether any fault depends on a token's attempt number (only then are attempts counted,
    /// in a table that grows with the distinct tokens seen).
    var needsAttemptNumbers: Bool {
        !failures.isEmpty || tooManyRequestsRate > 0 || refuseStreamsRate > 0
            || scripted.values.contains { $0.times != nil }
    }
}

/// One `--fail` entry: answer `status` (500 InternalServerError or 503 ServiceUnavailable) at `rate`.
public struct MockAPNsFailureRate: Sendable, Hashable {
    /// 500 or 503.
    public var status: Int
    /// The share of requests so answered, in 0...1.
    public var rate: Double

    /// Answer `status` to a `rate` share of requests.
    public init(status: Int, rate: Double) {
        self.status = status
        self.rate = rate
    }
}
