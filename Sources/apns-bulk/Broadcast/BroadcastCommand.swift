import ArgumentParser
import Foundation
import Pipeline
import Report

/// `apns-bulk broadcast`: a Live Activity broadcast campaign, one update per CSV row to a channel,
/// sent by `send`'s engine (`CampaignConfiguration.broadcast`), every row ending in one recorded outcome.
struct BroadcastCommand: ParsableCommand {
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
    // Here, not in ConnectionFlags: one host to spread across, where send's has several.
    @Option(help: "Connections in all.")
    var connections = 4
    // Here, not in ConnectionFlags: updates, where send's counts notifications.
    @Option(help: "At most this many updates per second for the whole run, retries included (e.g. 500 or 0.5). Default: as fast as APNs answers.")
    var rate: Double?
    /// --max-streams, --ca-file, --proxy and --mock-option, as send has them.
    @OptionGroup var connection: ConnectionFlags

    // Retries
    @OptionGroup var retry: RetryFlags

    // Output: --out, --progress, --resume and --dry-run, as send has them.
    @OptionGroup var output: OutputFlags

    // Metrics
    @OptionGroup var metrics: MetricsFlags

    func run() throws {
        let setup = try BroadcastSetup(self)
        defer { setup.mock?.stop() }
        let result = try Campaign(configuration: setup.configuration).runStoppingOnSignals()
        try CampaignReport.finish(result, directory: setup.configuration.outputDirectory, resumed: output.resume,
                                  deadList: ("dead channels", BroadcastCampaign.deadChannelsFile))
    }
}
