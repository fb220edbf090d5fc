import APNs
import Foundation
import Pipeline
import Report
import Transport

/// `broadcast`'s flags turned into a campaign's configuration (`CampaignConfiguration.broadcast`),
/// every mistake found before anything is sent (exit 1). Starts the embedded mock, admitting any
/// well-formed channel, for `--endpoint mock`.
struct BroadcastSetup {
    let configuration: CampaignConfiguration
    let mock: EmbeddedMock?

    init(_ command: BroadcastCommand) throws {
        if let problem = ChannelManagementAPI.problem(bundleID: command.bundleID) { throw RunFailure.usage(problem) }
        if let reason = BroadcastRules.checkPriority(command.priority) {
            throw RunFailure.usage("--priority \(command.priority): give 10, 5 or 1 (APNs would answer \(reason.name))")
        }
        guard HeaderRules.expirationSeconds(command.expiration) != nil else {
            throw RunFailure.usage("--expiration \(command.expiration): give whole epoch seconds, or 0 to deliver once and store nothing")
        }
        try Self.checkCounts(command)
        let parsed = try command.endpoint.map { try SendEndpoints.parse($0, binary: false) }
        let usesMock = if case .mock? = parsed?.target { true } else { false }
        let environment = try Self.environment(command, named: parsed?.environment)
        if !command.connection.mockOptions.isEmpty && !usesMock {
            throw RunFailure.usage("--mock-option \(command.connection.mockOptions[0]) configures the embedded mock: add --endpoint mock, or leave it out")
        }
        let credentials = try command.credentials.load(usesMock: usesMock, environment: environment, caFile: command.connection.caFile,
                                                       what: "broadcasts")

        var endpoint: Endpoint
        var caFile = command.connection.caFile
        var mock: EmbeddedMock?
        switch parsed?.target {
        case .mock?:
            // A broadcast to any well-formed channel is taken: each command's embedded mock starts
            // with no channels (rehearse deleted channels against a mock-server instead).
            let started = try EmbeddedMock.start(options: ["admit-any-channel"] + command.connection.mockOptions,
                                                 keys: try credentials.mockKeys(),
                                                 clientIdentities: credentials.certificates.map(\.identity),
                                                 topic: command.bundleID, environment: environment)
            mock = started
            endpoint = started.endpoint
            caFile = started.caFile
        case .address(let address)?:
            let word = command.endpoint == "production" || command.endpoint == "sandbox"
            endpoint = word ? Self.host(environment) : address
        case nil:
            endpoint = Self.host(environment)
        }
        var proxy: HTTPProxy?
        if mock == nil {
            proxy = try SendCredentials.proxy(flag: command.connection.proxy, for: endpoint)
        } else if let flag = command.connection.proxy, !flag.isEmpty {
            writeStandardError("warning: --endpoint mock runs inside this process and is reached directly, not through --proxy\n")
        }
        do {
            configuration = try Self.configuration(command, credentials: credentials, endpoint: endpoint, proxy: proxy,
                                                   tls: try credentials.clientTLS(caFile: caFile), environment: environment)
        } catch {
            mock?.stop()
            throw error
        }
        self.mock = mock
    }

    private static func configuration(_ command: BroadcastCommand, credentials: SendCredentials, endpoint: Endpoint,
                                      proxy: HTTPProxy?, tls: TLSContext,
                                      environment: APNsEnvironment) throws -> CampaignConfiguration {
        let authentication: CampaignConfiguration.Authentication = credentials.keys.first.map { .token($0.source) } ?? .certificate
        var configuration = CampaignConfiguration(inputPath: command.input, authentication: authentication,
                                                  endpoints: [endpoint], tls: tls, outputDirectory: command.output.out ?? "")
        configuration.broadcast = BroadcastCampaign(bundleID: command.bundleID)
        configuration.prescan = !CSVSource.isStream(path: command.input)
        configuration.resume = command.output.resume
        // Rows naming one channel are its successive updates, not duplicates.
        configuration.allowDuplicates = true
        configuration.defaults = HeaderValues(pushType: PushType.liveactivity.headerValue, priority: command.priority,
                                              expiration: command.expiration)
        configuration.environment = environment
        configuration.proxies = [proxy]
        configuration.connections = command.connections
        configuration.maxStreams = command.connection.maxStreams
        configuration.reactorThreads = SendSetup.usableCores()
        configuration.maxAttempts = command.retry.maxAttempts
        configuration.retryBaseMilliseconds = command.retry.retryBaseMs
        configuration.retryMaxMilliseconds = command.retry.retryMaxMs
        if let rate = command.rate {
            guard rate > 0, rate.isFinite else {
                throw RunFailure.usage("--rate \(rate): give a positive number of updates per second, such as 500 or 0.5")
            }
            configuration.rate = rate
        }
        if command.output.dryRun && command.output.resume {
            throw RunFailure.usage("--dry-run with --resume: a dry run sends nothing, so there is no campaign to resume; leave one of them off")
        }
        configuration.dryRun = command.output.dryRun
        configuration.showProgress = command.output.progress.showsProgress
        configuration.metrics = try SendSetup.metricsOptions(command.metrics, shard: nil)
        configuration.exporters = CampaignExporter.standard
        // Claimed last, once the flags have passed their checks: a refused command leaves no directory.
        if command.output.out == nil { configuration.outputDirectory = try SendSetup.claimDefaultOutputDirectory() }
        return configuration
    }

    /// Apple's broadcast host of `environment` (its push host).
    static func host(_ environment: APNsEnvironment) -> Endpoint {
        let (host, port) = BroadcastEndpoints.broadcastHost(environment)
        return Endpoint(host: host, port: port)
    }

    private static func checkCounts(_ command: BroadcastCommand) throws {
        guard command.connections >= 1, command.connections <= SendSetup.maxConnectionsPerEndpoint else {
            throw RunFailure.usage("--connections \(command.connections): give 1 to \(SendSetup.maxConnectionsPerEndpoint)")
        }
        guard command.connection.maxStreams >= 1 else { throw RunFailure.usage("--max-streams \(command.connection.maxStreams): give at least 1") }
        guard command.retry.maxAttempts >= 1 else { throw RunFailure.usage("--max-attempts \(command.retry.maxAttempts): give at least 1") }
        guard command.retry.retryBaseMs >= 0, command.retry.retryMaxMs >= command.retry.retryBaseMs else {
            throw RunFailure.usage("--retry-base-ms \(command.retry.retryBaseMs) and --retry-max-ms \(command.retry.retryMaxMs): give 0 or more, the maximum at least the base")
        }
    }

    /// `--environment`, else the one `--endpoint` names (sandbox, sandbox=HOST:PORT), else production.
    private static func environment(_ command: BroadcastCommand, named: APNsEnvironment?) throws -> APNsEnvironment {
        let chosen = command.environment.map { $0 == .sandbox ? APNsEnvironment.sandbox : .production }
        if let chosen, let named, chosen != named {
            throw RunFailure.usage("--environment \(chosen.rawValue) with --endpoint \(command.endpoint ?? ""), which is "
                                   + "\(named.rawValue)'s: channels live in one environment; give the one they belong to")
        }
        return chosen ?? named ?? .production
    }
}
