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

    /// The campaign CSV (`.csv` or `.csv.zst`), or `-` for stdin: what ``Campaign/run()`` reads.
    public var inputPath: String
    /// Read the input once before sending (row count, file-level errors). Off for pipes.
    public var prescan = true
    /// The payload for rows whose `payload` field is empty or absent (`--payload-file`).
    public var defaultPayload: [UInt8]?
    /// `--payload-template`: filled from each row's columns for rows whose `payload` field is empty
    /// or absent. Not together with `defaultPayload` (the command refuses both).
    public var payloadTemplate: PayloadTemplate?
    /// Run-level header values (`--topic`, `--push-type`, ...); a row's own columns override them.
    public var defaults = HeaderValues()
    /// Provider tokens or the client certificate in `tls`.
    public var authentication: Authentication
    /// Where to send; connections are spread over them (and over each one's addresses).
    public var endpoints: [Endpoint]
    /// The environment each of `endpoints` serves, by index; empty: every endpoint serves `environment`.
    public var endpointEnvironments: [APNsEnvironment] = []
    /// The run's environment (`--environment`): the one of rows without an `environment` column.
    public var environment = APNsEnvironment.production
    /// Several keys or certificates (repeated `--key-file`, `[[keys]]`, ...), each row picking
    /// its own; empty: `authentication` (and the certificate in `tls`) serves every row.
    public var credentials: [CampaignCredential] = []
    /// `--environment-fallback`: a row answered BadDeviceToken in one environment is tried once in
    /// the other (when a credential serves it there) before its token counts as dead.
    public var environmentFallback = false
    /// The CONNECT proxy of each of `endpoints`, by index (`--proxy`, HTTPS_PROXY and NO_PROXY
    /// decided per endpoint); nil or no entry: that endpoint is reached directly.
    public var proxies: [HTTPProxy?] = []
    /// The client TLS context: trust (system store plus any CA given) and any client certificate.
    public var tls: TLSContext
    /// HTTP/2 connections in all (`--connections`), spread over the endpoints.
    public var connections = 4
    /// Concurrent streams per connection at most (`--max-streams`); APNs' own setting may lower it.
    public var maxStreams = 1000
    /// Reactor threads; default one per core.
    public var reactorThreads = 2
    /// Requests per row at most before it ends `gave_up` (`--max-attempts`).
    public var maxAttempts = 5
    /// The first retry's backoff ceiling (`--retry-base-ms`); later ones double it.
    public var retryBaseMilliseconds = 500
    /// The longest backoff before a retry (`--retry-max-ms`).
    public var retryMaxMilliseconds = 60_000
    /// The first reconnect's backoff ceiling (`--reconnect-base-ms`); APNs reads rapid reconnects as an attack.
    public var reconnectBaseMilliseconds = 500
    /// The longest backoff before a reconnect (`--reconnect-max-ms`).
    public var reconnectMaxMilliseconds = 30_000
    /// Refusals in a row of a run-wide value (a disallowed --topic, ...) that stop the run (`--abort-after`).
    public var abortAfter = 1
    /// With no connection ready for this long the run stops; the rows left end `gave_up` (`--unreachable-timeout`).
    public var unreachableTimeoutSeconds = 120.0
    /// How long in-flight requests may still finish after the run is told to stop.
    public var stopGraceSeconds = 3.0
    /// A PING goes out after this long with nothing received on a connection (`--ping-interval`).
    public var pingIntervalSeconds = 60.0
    /// No PING acknowledgement by then: the connection failed (its rows in flight are sent again).
    public var pingTimeoutSeconds = 10.0
    /// The oldest request in flight older than this fails its connection (`--response-timeout`).
    public var responseTimeoutSeconds = 30.0
    /// `--out`: where results.jsonl.zst, dead-tokens.csv and summary.json go; held for the run.
    public var outputDirectory: String
    /// `--resume`: continue the campaign in `outputDirectory`, skipping rows it has recorded.
    public var resume = false
    /// `--no-resend-lost`: a resume records the rows a crash lost `gave_up` `LostInCrash` (`CrashLoss`)
    /// rather than sending them again.
    public var noResendLost = false
    /// `--shard K/N`: send only this shard's rows (``Shard``); nil sends every row.
    public var shard: Shard?
    /// Draw the progress line on stderr (the writer thread, at most a few times a second).
    public var showProgress = false
    /// `--rate`: requests per second at most for the whole run (retries count), spread evenly
    /// across it; nil sends as fast as APNs answers.
    public var rate: Double?
    /// Tests only: where the pacer notes each fill's permits with the instant it took them.
    var pacerGrants: PacerGrants?
    /// `--spread`: seconds the campaign should take; the run picks `rate` from the rows it has to
    /// send (the prescan's count, less those a resume skips). Needs the prescan.
    public var spreadSeconds: Double?
    /// `--dry-run`: read and check every row as a run would, open no connection, write the result
    /// files with the rejected rows and the count that would be sent.
    public var dryRun = false
    /// Seeds the jitter of retries and reconnects. Drawn from the system's random source
    /// (getrandom) for every configuration, so the processes, shards and pods of one campaign do
    /// not back off in step and hit APNs together; a test sets it for a repeatable run.
    public var seed: UInt64 = UInt64.random(in: .min ... .max)
    /// `--metrics-out`, `--pushgateway`: where the run's Prometheus metrics go; nil for nowhere.
    /// The Report module's metrics exporter writes them (`CampaignExporter.standard` in ``exporters``).
    public var metrics: MetricsOptions?
    /// What follows each run besides the result files: the Report module's `CampaignExporter.standard`
    /// (the timeline sidecar, the metrics ``metrics`` asks for, report.html), as `apns-bulk send` has
    /// it, or a program's own. Empty: the result files only.
    public var exporters: [CampaignExporter] = []

    /// The wire: HTTP/2 (APNs today), or Apple's retired binary provider API (`--protocol binary`).
    public enum WireProtocol: String, Sendable {
        case http2, binary
    }
    /// `--protocol`.
    public var wireProtocol = WireProtocol.http2
    /// `--binary-quiet-ms`: a binary notification with no error response for this long is taken as
    /// accepted (the protocol answers only refusals).
    public var binaryQuietMilliseconds = 1000
    /// `--binary-window`: notifications per binary connection sent and not yet known good, at most.
    public var binaryWindow = 10_000

    /// `--allow-duplicates`: send every row, even a token (with the same topic) seen before in the
    /// campaign. Off by default: a later row with the key of an earlier one is `rejected`
    /// `DuplicateToken`, its record's `duplicate_of` naming the first (`DuplicateTokens`).
    public var allowDuplicates = false
    /// The prescan's Bloom filter for duplicate tokens at most (freed before sending; smaller for a
    /// smaller input, `DuplicateScanRequest.bloomBytes(inputBytes:)`); a test makes it tiny.
    var duplicateFilterBytes = 20 << 20

    /// A Live Activity broadcast (`apns-bulk broadcast`): rows name channels of this app, not device
    /// tokens; nil for device pushes. Its rows are never duplicates of each other (successive
    /// updates of one channel are the usual campaign), so `allowDuplicates` does not apply.
    public var broadcast: BroadcastCampaign?

    /// Set by `Campaign.run(rows:)`: there is no input file to fingerprint.
    var rowsInMemory = false

    /// Token auth with no run-wide topic: every row must bring its own (APNs answers MissingTopic).
    /// A broadcast has no topic: its path names the app.
    var rowsNeedTopic: Bool {
        guard broadcast == nil, case .token = authentication else { return false }
        return defaults.topic?.isEmpty ?? true
    }

    /// Settings for a campaign read from `inputPath`; everything else keeps `apns-bulk send`'s default.
    public init(inputPath: String, authentication: Authentication, endpoints: [Endpoint], tls: TLSContext,
                outputDirectory: String) {
        self.inputPath = inputPath
        self.authentication = authentication
        self.endpoints = endpoints
        self.tls = tls
        self.outputDirectory = outputDirectory
    }

    /// Settings for a campaign whose rows come from memory (`Campaign.run(rows:)`): no input file.
    public init(authentication: Authentication, endpoints: [Endpoint], tls: TLSContext, outputDirectory: String) {
        self.init(inputPath: Campaign.rowsInputName, authentication: authentication, endpoints: endpoints, tls: tls,
                  outputDirectory: outputDirectory)
    }
}
