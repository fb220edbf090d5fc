import APNs
import ArgumentParser
import Dispatch
import Foundation
import Pipeline
import Report
import Transport

/// `apns-bulk send`: a campaign from a CSV file to APNs, every row accounted for.
struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a campaign: one notification per CSV row, every row ending in one recorded outcome.",
        // Paragraphs without line breaks of their own: --help wraps them to the terminal's width.
        // Lists are short lines, so that no width splits an item.
        discussion: """
            Writes results.jsonl.zst, dead-tokens.csv, summary.json and report.html \
            to --out, and a summary of the run to stdout; report.html is the run's \
            charts, a page that opens offline. Progress and diagnostics go to stderr.

            Exit status:
              0  finished: every row delivered, unregistered, bad_token,
                 failed or rejected
              1  bad input or configuration; nothing was sent
              2  aborted: credentials refused, a run-level misconfiguration,
                 or a signal
              3  finished, but some rows gave up

            --endpoint mock runs an APNs emulator in this process, so that a campaign \
            can be rehearsed with no Apple account. A fresh signing key is made when \
            none is given.

            An --out that holds a campaign is never overwritten: without --resume, \
            the run stops with exit 1. After a crash, kill, reboot or SIGTERM, run \
            the same command plus --resume. It checks that the input is the same \
            file, skips every row that results.jsonl.zst records, sends the rest and \
            appends to the same log; rows recorded aborted are sent again. Then \
            dead-tokens.csv and summary.json cover the whole campaign. --resume on a \
            finished campaign says so and exits 0; on a directory with no campaign it \
            starts one. It needs --input to be a regular file (.csv or .csv.zst), not a \
            pipe.

            A kill -9 loses the answers of the rows in flight and of those answered in \
            the last quarter of a second, which the log had not yet written. --resume \
            sends those rows again, and summary.json's resent_after_crash counts them \
            exactly (send keeps a bitmap of the rows it sent, sent-rows, in --out). \
            With --no-resend-lost it does not send them: they are recorded gave_up \
            with reason LostInCrash (exit 3), and no later --resume sends them either.
            """
    )

    // Input
    @Option(help: "The campaign: a CSV file (.csv or .csv.zst) with a device_token column; - reads stdin.")
    var input: String
    @Option(name: .customLong("payload-file"), help: "JSON payload for rows whose payload is empty or absent. Default: none; each row then brings its own payload.")
    var payloadFile: String?
    @Flag(name: .customLong("no-prescan"), help: "Do not read the input twice; no ETA then. Stdin (-) and named pipes skip it by themselves.")
    var noPrescan = false
    @Option(name: .customLong("payload-template"), help: "A JSON payload for rows whose payload is empty or absent, its strings holding {{column}} placeholders: each is filled with that column of the row, any header column, escaped as JSON string text. Not together with --payload-file. Default: none.")
    var payloadTemplate: String?
    @Flag(name: .customLong("allow-duplicates"), help: "Send every row. By default a device token that appears again in the campaign with the same topic (case-insensitive) is sent once: the later rows are recorded rejected with reason DuplicateToken and duplicate_of naming the first row.")
    var allowDuplicates = false

    // Run-level headers; a row's own columns override them.
    @Option(help: "apns-topic: the app's bundle id, with the suffix its push type needs, if any. Default: none; each row's topic column then, or with certificate auth the certificate's topic.")
    var topic: String?
    @Option(name: .customLong("push-type"), help: "apns-push-type (alert, background, voip, ...); a row's push_type column overrides it. Every request carries the header, as APNs expects. Default: alert.")
    var pushType: String?
    @Option(help: "apns-priority: 10, 5 or 1. Default: 10, or 5 for background.")
    var priority: String?
    @Option(help: "apns-expiration in epoch seconds; 0 delivers once and stores nothing. Default: none; APNs then decides how long to store it.")
    var expiration: String?
    @Option(name: .customLong("collapse-id"), help: "apns-collapse-id, at most 64 bytes. Default: none.")
    var collapseID: String?

    // Credentials
    @Option(name: .customLong("key-file"), help: "Token auth: a .p8 signing key; repeat for several. With several, each file keeps Apple's name AuthKey_<KEYID>.p8, which gives its key id. Default: none; give a key or a certificate, or --endpoint mock alone.")
    var keyFile: [String] = []
    @Option(name: .customLong("key-id"), help: "Token auth: the key's 10-character Key ID, with one --key-file. Default: the one in the file's name AuthKey_<KEYID>.p8.")
    var keyID: String?
    @Option(name: .customLong("team-id"), help: "Token auth: the 10-character Team ID of every --key-file, and of the --keys-file entries without their own. Default: none.")
    var teamID: String?
    @Option(name: .customLong("keys-file"), help: "Token auth: the signing keys listed as [[keys]] tables in this TOML file, each with file, key-id, team-id, environment, topics and related-key-id; each row is sent with the key that serves its topic and environment. A job file's own [[keys]] tables arrive here. Default: none.")
    var keysFile: String?
    @Option(name: .customLong("cert-file"), help: "Certificate auth: a client certificate (PEM); repeat for several, each paired by position with a --cert-key-file and serving the apps its certificate names. Default: none.")
    var certFile: [String] = []
    @Option(name: .customLong("cert-key-file"), help: "Certificate auth: the private key (PEM) of the --cert-file at the same position. Default: none.")
    var certKeyFile: [String] = []
    @Option(name: .customLong("p12-file"), help: "Certificate auth: a .p12 holding certificate and key; repeatable. Default: none.")
    var p12File: [String] = []
    @Option(name: .customLong("p12-password-env"), help: "The environment variable holding the password of every --p12-file. Default: none, for .p12 files without a password.")
    var p12PasswordEnv: String?
    @Option(help: "production or sandbox: the APNs environment of the rows (and of a plain --endpoint HOST:PORT). Default: production, or sandbox when every --endpoint is a sandbox one.")
    var environment: EnvironmentChoice?
    @Flag(name: .customLong("environment-fallback"), help: "Try a row answered BadDeviceToken once in the other environment (when a credential serves it there) before its token counts as dead: for token tables that mix production and sandbox tokens.")
    var environmentFallback = false

    // Where and how fast
    @Option(help: "production, sandbox, HOST:PORT, production=HOST:PORT, sandbox=HOST:PORT or mock; repeat to spread across several. A plain HOST:PORT serves --environment; mock starts an APNs emulator per environment the run needs. Default: production, which is api.push.apple.com:443, and sandbox, api.sandbox.push.apple.com:443, when the run needs it.")
    var endpoint: [String] = []
    // Here, not in ConnectionFlags: broadcast's --connections has one host to spread across.
    @Option(help: "Connections in all, spread across endpoints and their addresses.")
    var connections = 4
    @Option(help: "Reactor threads. Default: one per core this process may use.")
    var threads: Int?
    // Here, not in ConnectionFlags: broadcast's --rate counts updates, and goes without --spread.
    @Option(help: "At most this many notifications per second for the whole run, retries included, spread evenly across it (e.g. 500 or 0.5). Default: as fast as APNs answers.")
    var rate: Double?
    @Option(help: "Pace the campaign to take about this long, e.g. 90s, 30m, 2h or 1h30m: the rate is the row count over this time; 0s means no spread. Needs the prescan's row count, so not with stdin or --no-prescan; not with --rate. Default: none, so no pacing.")
    var spread: String?
    /// --max-streams, --ca-file, --proxy and --mock-option, as broadcast has them.
    @OptionGroup var connection: ConnectionFlags
    @Option(help: "Hosts reached without the proxy, a comma-separated list as curl reads it: names (with their subdomains), IP addresses or CIDR blocks, optionally with :PORT, or * for all. Overrides no_proxy/NO_PROXY; '' proxies every host. Default: no_proxy or NO_PROXY from the environment.")
    var noproxy: String?

    // Apple's retired binary provider API (issue 15)
    @Option(name: .customLong("protocol"), help: "http2, the default, or binary: Apple's binary provider API, retired in 2021, for gateways and relays that still speak it. Binary needs certificate auth, and production and sandbox then mean gateway.push.apple.com:2195 and gateway.sandbox.push.apple.com:2195.")
    var wireProtocolChoice: WireProtocolChoice?
    @Option(name: .customLong("binary-quiet-ms"), help: "With --protocol binary: a notification with no error response for this many milliseconds is taken as accepted, and the rows sent within it before a connection closes without an error response are sent again. Default: 1000.")
    var binaryQuietMsChoice: Int?
    @Option(name: .customLong("binary-window"), help: "With --protocol binary: notifications per connection sent and not yet known good, at most. Those at risk of a refusal's discard start at 100, halve on each refusal and grow back as notifications go through, up to this. Default: 10000.")
    var binaryWindowChoice: Int?

    var wireProtocol: WireProtocolChoice { wireProtocolChoice ?? .http2 }
    var binaryQuietMs: Int { binaryQuietMsChoice ?? 1000 }
    var binaryWindow: Int { binaryWindowChoice ?? 10_000 }

    // Retries and stopping
    @OptionGroup var retry: RetryFlags
    @Option(name: .customLong("reconnect-base-ms"), help: "First reconnect backoff, doubled per failure, with jitter.")
    var reconnectBaseMs = 500
    @Option(name: .customLong("reconnect-max-ms"), help: "Longest reconnect backoff.")
    var reconnectMaxMs = 30_000
    @Option(name: .customLong("abort-after"), help: "Refusals in a row of a run-wide value, such as TopicDisallowed for --topic, after which the rows that use that value are not sent but recorded aborted. A row's own column refused fails that row only.")
    var abortAfter = 1
    @Option(name: .customLong("unreachable-timeout"), help: "Seconds with every endpoint unreachable before the rest gives up.")
    var unreachableTimeout = 120.0
    @Option(name: .customLong("response-timeout"), help: "Seconds to wait for an answer before the connection counts as dead.")
    var responseTimeout = 30.0
    @Option(name: .customLong("ping-interval"), help: "Seconds of silence before a PING checks the connection.")
    var pingInterval = 60.0

    // Output
    /// --out, --progress, --resume and --dry-run, as broadcast has them.
    @OptionGroup var output: OutputFlags
    @Flag(name: .customLong("no-resend-lost"), help: "With --resume: do not send again the rows a crash lost, those sent whose answer was not yet logged when the run was killed. They are recorded gave_up with reason LostInCrash and the run exits 3; no later --resume sends them. Default: they are sent again.")
    var noResendLost = false
    @Option(help: ArgumentHelp("Send only shard K of N (K counted from 0): the rows whose device token, in lower case, hashes to K (docs/sending.md, Shards). N processes with --shard 0/N to N-1/N and an --out each send the whole campaign between them, every copy of a token from one of them; report merges their logs. Default: none; every row.", valueName: "K/N"))
    var shard: String?
    @Option(help: "A TOML job file: keys are these flags' names, a [mock] table configures --endpoint mock. Flags win. Default: none.")
    var config: String?

    // Metrics
    @OptionGroup var metrics: MetricsFlags

    enum WireProtocolChoice: String, ExpressibleByArgument { case http2, binary }
    enum EnvironmentChoice: String, ExpressibleByArgument { case production, sandbox }

    /// `--connections -1` becomes `--connections=-1`: the parser takes an argument that starts
    /// with '-' for a flag and would say "Missing value for '--connections'", where the value is
    /// there and only wrong; joined, it reaches the checks that say what is wrong with it.
    static func attachingNegativeValues(_ arguments: [String]) -> [String] {
        var joined: [String] = []
        joined.reserveCapacity(arguments.count)
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument.hasPrefix("--"), !argument.contains("="), index + 1 < arguments.count,
               isNegativeNumber(arguments[index + 1]) {
                joined.append(argument + "=" + arguments[index + 1])
                index += 2
            } else {
                joined.append(argument)
                index += 1
            }
        }
        return joined
    }

    private static func isNegativeNumber(_ text: String) -> Bool {
        guard text.count > 1 && text.hasPrefix("-") else { return false }
        // `--shard -1/3` too: no flag starts with a digit.
        return Double(text.dropFirst()) != nil || text.dropFirst().first.map { $0.isASCII && $0.isNumber } == true
    }

    func run() throws {
        let setup = try SendSetup(command: self)
        defer { setup.mock?.stop() }
        let result = try Campaign(configuration: setup.configuration).runStoppingOnSignals()
        try CampaignReport.finish(result, directory: setup.configuration.outputDirectory, resumed: output.resume,
                                  deadList: ("dead tokens", "dead-tokens.csv"))
    }
}
