import APNs
import Transport

/// Everything a campaign run needs, decided before anything is sent (the command line builds it).
public struct CampaignConfiguration: Sendable {
    /// How requests are authenticated: one shared provider token source, or the TLS client
    /// certificate already inside `tls`.
    public enum Authentication: Sendable {
        case token(TokenSource)
        case certificate

        var kind: AuthKind {
            switch self {
            case .token: .token
            case .certificate: .certificate
            }
        }
    }

    public var inputPath: String
    /// Read the input once before sending (row count, file-level errors). Off for pipes.
    public var prescan = true
    /// The payload for rows whose `payload` field is empty or absent (`--payload-file`).
    public var defaultPayload: [UInt8]?
    /// Run-level header values (`--topic`, `--push-type`, ...); a row's own columns override them.
    public var defaults = HeaderValues()
    public var authentication: Authentication
    public var endpoints: [Endpoint]
    public var tls: TLSContext
    public var connections = 4
    public var maxStreams = 1000
    /// Reactor threads; default one per core.
    public var reactorThreads = 2
    public var maxAttempts = 5
    public var retryBaseMilliseconds = 500
    public var retryMaxMilliseconds = 60_000
    public var reconnectBaseMilliseconds = 500
    public var reconnectMaxMilliseconds = 30_000
    public var abortAfter = 100
    public var unreachableTimeoutSeconds = 120.0
    /// How long in-flight requests may still finish after the run is told to stop.
    public var stopGraceSeconds = 3.0
    public var pingIntervalSeconds = 60.0
    public var pingTimeoutSeconds = 10.0
    public var responseTimeoutSeconds = 30.0
    public var outputDirectory: String
    /// `--resume`: continue the campaign in `outputDirectory`, skipping rows it has recorded.
    public var resume = false
    public var showProgress = false
    /// Seeds the jitter of retries and reconnects. Drawn from the system's random source
    /// (getrandom) for every configuration, so the processes, shards and pods of one campaign do
    /// not back off in step and hit APNs together; a test sets it for a repeatable run.
    public var seed: UInt64 = UInt64.random(in: .min ... .max)

    /// Token auth with no run-wide topic: every row must bring its own (APNs answers MissingTopic).
    var rowsNeedTopic: Bool {
        guard case .token = authentication else { return false }
        return defaults.topic?.isEmpty ?? true
    }

    public init(inputPath: String, authentication: Authentication, endpoints: [Endpoint], tls: TLSContext,
                outputDirectory: String) {
        self.inputPath = inputPath
        self.authentication = authentication
        self.endpoints = endpoints
        self.tls = tls
        self.outputDirectory = outputDirectory
    }
}
