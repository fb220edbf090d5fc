import APNs
import Transport

/// The MockAPNs module: an APNs emulator on Transport's server side (see DESIGN.md).
public enum MockAPNsModule {
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
        /// Provider tokens, but only their presence is checked (no `--verify-key-file`): any
        /// non-empty `bearer` value is accepted and never expires.
        case tokenPresenceOnly
        /// Mutual TLS: clients present a certificate issued by these CAs; `authorization` is ignored.
        case certificate(TLSTrust)
    }

    /// What the mock answers for a device token (`--respond-file`).
    public struct ScriptedAnswer: Sendable, Hashable {
        public var status: Int
        public var reason: String
        /// Answer so for the first `times` attempts of the token, then normally; nil: every attempt.
        public var times: Int?

        public init(status: Int, reason: String, times: Int? = nil) {
            self.status = status
            self.reason = reason
            self.times = times
        }
    }

    public var address: SocketAddress = .loopback(port: 0)
    /// The server certificate; `.ephemeral` makes a CA for 127.0.0.1, ::1 and localhost.
    public var identity: H2ServerIdentity = .ephemeral(hosts: ["127.0.0.1", "::1", "localhost"])
    /// Where to write the ephemeral CA's certificate (`--ca-out`).
    public var caOutPath: String?
    public var authentication: Authentication = .tokenPresenceOnly
    /// Bundle ids served (`--topic`); each push type's suffix of one is allowed too. Empty: any
    /// topic is allowed, and only its suffix is checked against the push type.
    public var topics: Set<String> = []
    /// Dead tokens (lowercase hex) and the 410 timestamp (ms) of each.
    public var unregistered: [String: Int64] = [:]
    /// Scripted answers by device token (lowercase hex).
    public var scripted: [String: ScriptedAnswer] = [:]
    /// SETTINGS_MAX_CONCURRENT_STREAMS once a connection is authorized (`--max-streams`).
    public var maxStreams = 1000
    /// SETTINGS_MAX_CONCURRENT_STREAMS of a new token-auth connection (`--initial-max-streams`).
    public var initialMaxStreams = 1
    public var latencyMilliseconds = 0
    public var latencyJitterMilliseconds = 0
    /// Random server errors: (status 500 or 503, rate in 0...1) (`--fail`).
    public var failures: [MockAPNsFailureRate] = []
    /// Rate of 429 TooManyRequests (`--too-many-requests`).
    public var tooManyRequestsRate = 0.0
    /// Rate of RST_STREAM(REFUSED_STREAM) (`--refuse-streams`).
    public var refuseStreamsRate = 0.0
    /// Per connection: GOAWAY / TCP reset / stop reading after its N-th request.
    public var goawayAfter: Int?
    public var resetAfter: Int?
    public var stallAfter: Int?
    /// Drop a connection to one stream after it sent a rejected notification.
    public var throttleAfterErrors = false
    /// Seed of the random faults: a fault is a function of (seed, device token, attempt).
    public var seed: UInt64 = 0
    public var statsOutPath: String?
    public var recordOutPath: String?
    /// Provider token verdicts kept (distinct tokens); beyond it the cache starts over.
    public var tokenCacheCapacity = 4096
    /// When the server started, in ms since 1970: the 410 timestamp of unregistered tokens listed
    /// without one (`MockAPNsFiles.unregistered` takes it as its default).
    public var startedAtMilliseconds: Int64 = 0

    public init() {}

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
    public var status: Int
    public var rate: Double

    public init(status: Int, rate: Double) {
        self.status = status
        self.rate = rate
    }
}
