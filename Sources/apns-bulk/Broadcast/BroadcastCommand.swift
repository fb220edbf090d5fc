import ArgumentParser
import Foundation
import Pipeline
import Report

/// `apns-bulk broadcast`: a Live Activity broadcast campaign, one update per CSV row to a channel,
/// sent by `send`'s engine (`CampaignConfiguration.broadcast`), every row ending in one recorded outcome.
struct BroadcastCommand: ParsableCommand, MetricsFlags {
    static let configuration = CommandConfiguration(
        commandName: "broadcast",
        abstract: "Send Live Activity updates to broadcast channels: one per CSV row, every row recorded.",
        discussion: """
            Each row of --input is one update to one channel of the app: its header is \
            channel_id,payload and optionally priority, expiration and apns_request_id, \
            which override --priority and --expiration for that row. Several rows may \
            name the same channel: they are successive updates, each one sent. \
            Each goes to Apple's broadcast host as POST /4/broadcasts/apps/BUNDLE-ID \
            with the channel in apns-channel-id, and no apns-topic.

            A row is rejected, and never sent, when its channel ID is empty or not \
            base64, its priority is not 10, 5 or 1, its expiration is not whole \
            seconds, its apns_request_id is not a lowercase UUID, or its payload is \
            empty, over 5,120 bytes, not a JSON object or an update that would start \
            an activity (InvalidPayload: a broadcast can only update or end one).

            Writes results.jsonl.zst, dead-channels.csv, summary.json and report.html \
            to --out, and a summary of the run to stdout. dead-channels.csv lists the \
            rows answered ChannelNotRegistered: channels to remove from the app's \
            backend. A channel of the other environment is ChannelNotRegistered too, \
            so these wait for a delivered row to prove --environment right. 100 of \
            them without one stop the run, and those still waiting at its end count \
            alike: they end aborted WrongEnvironment, not listed, and --resume sends \
            them again. \
            Outcomes, retries and exit statuses are send's: a row APNs \
            refuses, such as with ChannelNotRegistered or with BadExpirationDate for \
            a channel that stores no message, ends failed, and 429 and 5xx answers \
            are tried again with backoff.

            Exit status:
              0  finished: every row delivered, failed or rejected
              1  bad input or configuration; nothing was sent
              2  aborted: credentials refused, the wrong environment, or a signal
              3  finished, but some rows gave up

            --endpoint mock runs an APNs emulator in this process that takes a \
            broadcast to any well-formed channel ID. --resume, --rate, --dry-run and \
            the metrics flags work as for send. Not for broadcasts: send's shards, \
            payload files and templates, duplicate checks and --protocol binary.
            """
    )

    @Option(help: "The updates: a CSV file (.csv or .csv.zst) with channel_id and payload columns.")
    var input: String
    @Option(name: .customLong("bundle-id"), help: "The app's bundle ID, whose channels the rows name, without a .push-type suffix.")
    var bundleID: String
    @Option(help: "apns-priority of rows without their own: 10, 5 or 1.")
    var priority = "10"
    @Option(help: "apns-expiration of rows without their own, in epoch seconds; 0 delivers once and stores nothing. A channel that stores no message refuses any other value (BadExpirationDate).")
    var expiration = "0"

    // Credentials: one key or one certificate, as for channels.
    @OptionGroup var credentials: AppCredentialFlags

    // Where and how fast
    @Option(help: "production or sandbox: the environment whose channels the rows name; a channel of one is unknown to the other. Default: production, or sandbox with --endpoint sandbox.")
    var environment: SendCommand.EnvironmentChoice?
    @Option(help: "production, which is api.push.apple.com:443; sandbox, api.sandbox.push.apple.com:443; HOST:PORT, serving --environment; or mock, an APNs emulator in this process. Default: the host of --environment.")
    var endpoint: String?
    @Option(help: "Connections in all.")
    var connections = 4
    @Option(name: .customLong("max-streams"), help: "Most concurrent streams per connection; the server may allow fewer.")
    var maxStreams = 1000
    @Option(help: "At most this many updates per second for the whole run, retries included (e.g. 500 or 0.5). Default: as fast as APNs answers.")
    var rate: Double?
    @Option(name: .customLong("ca-file"), help: "Also trust this CA (PEM) when verifying the server; adds trust, never disables it. Default: none; the system's trust store alone.")
    var caFile: String?
    @Option(help: "Reach APNs through this HTTP CONNECT proxy, http://[USER:PASSWORD@]HOST:PORT; --proxy '' connects directly. Default: https_proxy or HTTPS_PROXY when set, unless no_proxy or NO_PROXY exempts the host.")
    var proxy: String?
    @Option(name: .customLong("mock-option"), help: "A mock-server flag for --endpoint mock, as NAME=VALUE or NAME (e.g. goaway-after=5000); repeatable. Default: none.")
    var mockOptions: [String] = []

    // Retries
    @Option(name: .customLong("max-attempts"), help: "Attempts per row before it gives up.")
    var maxAttempts = 5
    @Option(name: .customLong("retry-base-ms"), help: "First retry backoff (429, 5xx), doubled per attempt, with jitter.")
    var retryBaseMs = 500
    @Option(name: .customLong("retry-max-ms"), help: "Longest retry backoff.")
    var retryMaxMs = 60_000

    // Output
    @Option(help: "Output directory. Default: ./apns-bulk-out/<UTC-timestamp>/.")
    var out: String?
    @Option(help: "Progress line on stderr: auto (when a TTY), always or never.")
    var progress: SendCommand.ProgressChoice = .auto
    @Flag(help: "Continue the campaign in --out after a crash or kill: skip the rows it has recorded, send the rest.")
    var resume = false
    @Flag(name: .customLong("dry-run"), help: "Read and check every row and the credentials, but connect to nothing and send nothing. Writes the rejected rows' records, and summary.json's would_send count, to --out.")
    var dryRun = false

    // Metrics
    @Option(name: .customLong("metrics-out"), help: "Write Prometheus metrics to this .prom file, replaced atomically every --metrics-interval seconds and at the end. Default: none.")
    var metricsOut: String?
    @Option(help: "Push the same Prometheus metrics to the Pushgateway at this http:// URL. Default: none.")
    var pushgateway: String?
    @Option(name: .customLong("metrics-job"), help: "The job label of pushed metrics.")
    var metricsJob = "apns_bulk"
    @Option(name: .customLong("metrics-instance"), help: "The instance label of the pushed metrics. Default: this host's name.")
    var metricsInstance: String?
    @Option(name: .customLong("metrics-interval"), help: "Seconds between rewrites of --metrics-out and pushes to --pushgateway.")
    var metricsInterval = 5.0

    func run() throws {
        let setup = try BroadcastSetup(self)
        defer { setup.mock?.stop() }
        let campaign = Campaign(configuration: setup.configuration)
        let signals = try StopSignals.install()
        let control = campaign.control
        signals.forward { control.stop(.interrupted(signal: $0)) }
        defer { signals.cancel() }
        let result: Campaign.Result
        do {
            result = try campaign.run()
        } catch let error as Campaign.SetupError {
            throw RunFailure.usage(error.description)
        }
        let directory = setup.configuration.outputDirectory
        var text = ""
        if resume && result.summary.carriedRows > 0 && result.summary.carriedRows == result.summary.rows {
            text += "the campaign in \(directory) is already finished: every one of its \(result.summary.rows) rows has a record; nothing was sent\n"
        }
        text += result.summary.humanText
        if let cause = result.stopCause { text += "stopped: \(cause.message)\n" }
        text += "results:       \(directory)/results.jsonl.zst\n"
        text += "dead channels: \(directory)/\(BroadcastCampaign.deadChannelsFile)\n"
        text += "summary:       \(directory)/summary.json\n"
        let page = directory + "/" + ReportPageFile.name
        if FileManager.default.fileExists(atPath: page) { text += "report:        \(page)\n" }
        writeStandardOutput(text)
        if let cause = result.stopCause { writeStandardError("stopped: \(cause.message)\n") }
        if result.exitStatus != 0 { throw ExitCode(result.exitStatus) }
    }
}
