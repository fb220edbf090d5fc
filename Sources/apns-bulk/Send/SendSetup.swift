import APNs
import Foundation
import Pipeline
import Report
import Transport

/// Turns `send`'s flags into a `CampaignConfiguration`, finding every configuration error before
/// anything is sent (exit 1, with a message naming the flag and the fix). Starts the embedded mock
/// for `--endpoint mock`.
struct SendSetup {
    var configuration: CampaignConfiguration
    var mock: EmbeddedMocks?

    init(command: SendCommand) throws {
        let binary = command.wireProtocol == .binary
        if binary { try Self.checkBinary(command, endpoints: command.endpoint) }
        try Self.checkCounts(command)
        let shard: Shard?
        do { shard = try command.shard.map { text throws(Shard.ParseError) in try Shard(parsing: text) } } catch {
            throw RunFailure.usage(error.description)
        }
        let defaults = try Self.headerDefaults(command)
        let payload = try command.payloadFile.map { try Self.loadPayload($0, pushType: defaults.pushType) }
        if command.payloadFile != nil && command.payloadTemplate != nil {
            throw RunFailure.usage("give --payload-file or --payload-template, not both: both fill the rows whose payload is empty")
        }
        let template = try command.payloadTemplate.map { try Self.loadTemplate($0) }

        // Credentials: keys or certificates, or none at all when every endpoint is the embedded mock.
        var plan = try SendEndpoints(command, binary: binary)
        try plan.checkMockOptions(command.connection.mockOptions)
        let credentials = try SendCredentials.load(command, onlyMock: plan.onlyMock)
        // One credential for every row, one environment: today's path, which costs a run nothing.
        let single = credentials.isOneForEverything(in: plan.environment) && !command.environmentFallback
            && plan.servesOneEnvironment
        if binary && !single {
            throw RunFailure.usage("--protocol binary sends with one certificate to one environment: run one process per certificate and environment (and no --environment-fallback)")
        }
        plan.addDefaults(bothEnvironments: !single, binary: binary)
        let needs = Self.environmentNeeds(command, credentials: credentials, environment: plan.environment)
        try plan.check(needs: needs)
        var mockEnvironments = [plan.environment]
        for need in needs where !mockEnvironments.contains(need.environment) { mockEnvironments.append(need.environment) }
        try Self.checkConnections(command.connections, endpoints: plan.items.reduce(0) { count, item in
            if case .mock = item.target { return count + mockEnvironments.count } else { return count + 1 }
        })

        // Endpoints; `mock` becomes the addresses of in-process mocks (one per environment) with their CAs.
        var endpoints: [Endpoint] = []
        var endpointEnvironments: [APNsEnvironment] = []
        var extraTrust: [String] = command.connection.caFile.map { [$0] } ?? []
        if let caFile = command.connection.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw RunFailure.usage("--ca-file \(caFile): cannot read it; give a PEM file of CA certificates")
        }
        let usesMock = plan.items.contains { if case .mock = $0.target { true } else { false } }
        if usesMock && command.connection.caFile != nil && !command.output.dryRun {
            throw RunFailure.usage("--ca-file cannot be combined with --endpoint mock (the mock brings its own CA)")
        }
        var mock: EmbeddedMocks?
        let proxySettings = try Self.proxySettings(command)
        var proxies: [HTTPProxy?] = []
        for item in plan.items {
            switch item.target {
            case .mock:
                if command.output.dryRun {  // a dry run connects to nothing: no mock to start
                    // With several credentials the rows still need each mock's environment served.
                    if !single { Self.dryRunMocks(mockEnvironments, &endpoints, &endpointEnvironments, &proxies) }
                    continue
                }
                if mock == nil {
                    let started = try EmbeddedMocks.start(environments: mockEnvironments, options: command.connection.mockOptions,
                                                          keys: try credentials.mockKeys(),
                                                          clientIdentities: credentials.certificates.map(\.identity),
                                                          topic: defaults.topic)
                    extraTrust.append(started.caFile)
                    mock = started
                }
                // The embedded mock lives in this process: never through a proxy.
                for started in mock?.mocks ?? [] {
                    endpoints.append(started.mock.endpoint)
                    endpointEnvironments.append(started.environment)
                    proxies.append(nil)
                }
            case .address(let endpoint):
                endpoints.append(endpoint)
                endpointEnvironments.append(item.environment)
                let gateway = binary && Self.binaryGateways[item.name] != nil
                proxies.append(gateway ? nil : proxySettings.proxy(for: endpoint))
            }
        }
        if mock != nil, let flag = command.connection.proxy, !flag.isEmpty {
            writeStandardError("warning: --endpoint mock runs inside this process and is reached directly, not through --proxy\n")
        }
        let trust = extraTrust.first.map { TLSTrust.caFile($0) }
        let tls: TLSContext
        do {
            tls = try TLSContext.client(additionalTrust: trust, identity: credentials.certificates.first?.identity,
                                        offersH2: !binary)
        } catch {
            throw RunFailure.usage("TLS setup: \(error)")
        }

        let authentication: CampaignConfiguration.Authentication = credentials.keys.first.map { .token($0.source) } ?? .certificate
        var configuration = CampaignConfiguration(
            inputPath: command.input, authentication: authentication, endpoints: endpoints, tls: tls,
            outputDirectory: command.output.out ?? "")
        // A stream (stdin, a named pipe) can be read only once: no prescan, progress without an ETA.
        configuration.prescan = !command.noPrescan && !CSVSource.isStream(path: command.input)
        configuration.resume = command.output.resume
        configuration.noResendLost = command.noResendLost
        configuration.allowDuplicates = command.allowDuplicates
        configuration.shard = shard
        configuration.defaultPayload = payload
        configuration.payloadTemplate = template
        configuration.defaults = defaults
        configuration.environment = plan.environment
        configuration.environmentFallback = command.environmentFallback
        if !single {
            configuration.endpointEnvironments = endpointEnvironments
            configuration.credentials = try credentials.campaignCredentials(trust: trust, offersH2: !binary)
        }
        configuration.proxies = proxies
        configuration.connections = command.connections
        configuration.maxStreams = command.connection.maxStreams
        configuration.reactorThreads = command.threads ?? Self.usableCores()
        configuration.maxAttempts = command.retry.maxAttempts
        configuration.retryBaseMilliseconds = command.retry.retryBaseMs
        configuration.retryMaxMilliseconds = command.retry.retryMaxMs
        configuration.reconnectBaseMilliseconds = command.reconnectBaseMs
        configuration.reconnectMaxMilliseconds = command.reconnectMaxMs
        configuration.abortAfter = command.abortAfter
        configuration.unreachableTimeoutSeconds = command.unreachableTimeout
        configuration.responseTimeoutSeconds = command.responseTimeout
        configuration.pingIntervalSeconds = command.pingInterval
        try Self.pace(command, configuration: &configuration)
        if command.output.dryRun { try Self.checkDryRun(command, credentials: credentials) }
        configuration.dryRun = command.output.dryRun
        if binary {
            configuration.wireProtocol = .binary
            configuration.binaryQuietMilliseconds = command.binaryQuietMs
            configuration.binaryWindow = command.binaryWindow
        }
        configuration.showProgress = command.output.progress.showsProgress
        configuration.metrics = try Self.metricsOptions(command.metrics, shard: shard)
        // The timeline sidecar, those metrics and report.html: what every run of `send` writes
        // besides its result files (Report's exporters; a dry run gets the page only).
        configuration.exporters = CampaignExporter.standard
        if credentials.generated && configuration.defaults.topic == nil {
            configuration.defaults.topic = EmbeddedMock.defaultTopic
        }
        // Claimed last, once the flags have passed their checks: a refused command leaves no directory.
        if command.output.out == nil { configuration.outputDirectory = try Self.claimDefaultOutputDirectory() }
        self.configuration = configuration
        self.mock = mock
    }

    /// The environments the run needs an endpoint for, and why: its own, each credential's
    /// restriction, and both with `--environment-fallback`.
    static func environmentNeeds(_ command: SendCommand, credentials: SendCredentials,
                                 environment: APNsEnvironment) -> [(environment: APNsEnvironment, why: String)] {
        var needs = [(environment, command.environment == nil ? "the run's environment (--environment, default production)"
                                                              : "--environment \(environment.rawValue)")]
        for key in credentials.keys {
            if let restricted = key.entry.key.environment { needs.append((restricted, "key \(key.entry.key.keyID) (\(key.entry.origin))")) }
        }
        for certificate in credentials.certificates {
            if let restricted = certificate.environment { needs.append((restricted, "the certificate \(certificate.file)")) }
        }
        if command.environmentFallback { needs.append((environment.other, "--environment-fallback")) }
        return needs
    }

    /// `--proxy`/`--noproxy`, else the environment's, as curl reads them (`ProxySettings`).
    private static func proxySettings(_ command: SendCommand) throws -> ProxySettings {
        do {
            return try ProxySettings(proxyFlag: command.connection.proxy, noProxyFlag: command.noproxy,
                                     environment: ProcessInfo.processInfo.environment)
        } catch {
            throw RunFailure.usage(error.description)
        }
    }

    private static func checkCounts(_ command: SendCommand) throws {
        let positive: [(String, Int)] = [("--connections", command.connections), ("--max-streams", command.connection.maxStreams),
                                         ("--max-attempts", command.retry.maxAttempts), ("--retry-base-ms", command.retry.retryBaseMs),
                                         ("--retry-max-ms", command.retry.retryMaxMs), ("--abort-after", command.abortAfter),
                                         ("--reconnect-base-ms", command.reconnectBaseMs),
                                         ("--reconnect-max-ms", command.reconnectMaxMs)]
        for (flag, value) in positive where value < 1 {
            throw RunFailure.usage("\(flag) \(value): must be at least 1")
        }
        if let threads = command.threads, threads < 1 { throw RunFailure.usage("--threads \(threads): must be at least 1") }
        if command.noResendLost && !command.output.resume {
            throw RunFailure.usage("--no-resend-lost without --resume: it says what a resume does with the rows a crash lost; add --resume, or leave it off")
        }
        for (flag, value) in [("--unreachable-timeout", command.unreachableTimeout),
                              ("--response-timeout", command.responseTimeout), ("--ping-interval", command.pingInterval)]
        where !(value > 0) {
            throw RunFailure.usage("\(flag) \(value): must be a positive number of seconds")
        }
    }

    /// Most connections per `--endpoint`. APNs treats a storm of connections from one provider as
    /// an attack (it may refuse or throttle them), and one connection carries up to
    /// `--max-streams` (APNs allows 1000) notifications at a time, so a few connections already
    /// reach APNs' pace (benchmarks/RESULTS.md: 4 reach the mock's ceiling). 64 leaves room for
    /// every address a name resolves to several times over; 100,000 took 40 s and 493 MiB for
    /// 100 rows.
    static let maxConnectionsPerEndpoint = 64

    private static func checkConnections(_ connections: Int, endpoints: Int) throws {
        let cap = maxConnectionsPerEndpoint * endpoints
        guard connections > cap else { return }
        throw RunFailure.usage("--connections \(connections): at most \(maxConnectionsPerEndpoint) per endpoint (\(cap) with "
            + "\(endpoints) --endpoint); APNs treats a storm of connections as an attack, and each connection already "
            + "carries up to --max-streams notifications at once (4 to 16 connections reach APNs' pace). To send "
            + "faster, run several processes (shards) from several machines.")
    }

    /// The run-level header flags, checked as APNs would check them: a bad one would fail every row.
    private static func headerDefaults(_ command: SendCommand) throws -> HeaderValues {
        var pushType: PushType?
        if let text = command.pushType {
            guard let parsed = PushType(headerValue: text) else {
                throw RunFailure.usage("--push-type \(text): not a push type; use one of \(PushType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            pushType = parsed
        }
        if let text = command.priority {
            guard let priority = Priority(headerValue: text) else {
                throw RunFailure.usage("--priority \(text): use 10, 5 or 1")
            }
            if let pushType, !priority.isAllowed(for: pushType) {
                throw RunFailure.usage("--priority \(text) with --push-type \(pushType.rawValue): background notifications must use priority 5")
            }
        }
        if let topic = command.topic, let pushType, !pushType.accepts(topic: topic) {
            let suffix = pushType.topicSuffix.map { "end in \"\($0)\"" } ?? "not carry another push type's suffix"
            throw RunFailure.usage("--topic \(topic) with --push-type \(pushType.rawValue) (BadTopic): the topic must \(suffix); topics are never rewritten")
        }
        if let text = command.expiration, HeaderRules.checkExpiration(text) != nil {
            throw RunFailure.usage("--expiration \(text): give epoch seconds (digits only), or 0 to deliver once")
        }
        if let text = command.collapseID, HeaderRules.checkCollapseID(text) != nil {
            throw RunFailure.usage("--collapse-id: at most \(Limits.collapseIDBytes) bytes, and not empty")
        }
        return HeaderValues(topic: command.topic, pushType: command.pushType, priority: command.priority,
                            expiration: command.expiration, collapseID: command.collapseID)
    }

    private static func loadPayload(_ path: String, pushType: String?) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw RunFailure.usage("--payload-file \(path): cannot read it; give a file holding one JSON object")
        }
        let bytes = [UInt8](data)
        let type = pushType.flatMap { PushType(headerValue: $0) } ?? .alert
        if let reason = HeaderRules.checkPayload(bytes, pushType: type) {
            let detail = reason == .payloadTooLarge
                ? "\(bytes.count) bytes is over the \(Limits.payloadBytes(for: type))-byte limit"
                : reason == .payloadEmpty ? "it is empty" : "it is not a JSON object"
            throw RunFailure.usage("--payload-file \(path): \(detail) (\(reason.name))")
        }
        if type == .liveactivity, let rule = LiveActivityPayload(json: bytes).brokenRule(route: .deviceToken) {
            throw RunFailure.usage("--payload-file \(path) with --push-type liveactivity: \(rule.detail) (\(Reason.invalidPayload.name))")
        }
        return bytes
    }

    /// The template file, split and checked: with every placeholder empty it must be a JSON object.
    private static func loadTemplate(_ path: String) throws -> PayloadTemplate {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw RunFailure.usage("--payload-template \(path): cannot read it; give a file holding one JSON object with {{column}} placeholders in its strings")
        }
        var template: PayloadTemplate
        do { template = try PayloadTemplate(json: [UInt8](data)) } catch {
            throw RunFailure.usage("--payload-template \(path): \(error.description)")
        }
        if let reason = HeaderRules.checkPayload(template.emptyFilled, pushType: .voip), reason != .payloadTooLarge {
            let detail = reason == .payloadEmpty ? "it is empty" : "it is not a JSON object (with its placeholders empty)"
            throw RunFailure.usage("--payload-template \(path): \(detail) (\(reason.name))")
        }
        template.file = path
        return template
    }

    /// Cores this process may run on (`UsableCores`): one reactor thread each by default.
    static func usableCores() -> Int { UsableCores.count() }

    /// The default `--out`: `<base>/<UTC timestamp>`, made here with mkdir(2), which fails when
    /// the name is taken, so that a run started in the same second as another (two cron jobs)
    /// takes `<timestamp>-2`, then `-3`, ..., instead of meeting the other's campaign.
    static func claimDefaultOutputDirectory(in base: String = "./apns-bulk-out", at date: Date = Date()) throws -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let stamp = base + "/" + formatter.string(from: date)
        do { try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true) } catch {
            throw RunFailure.usage("cannot create \(base) for the default --out: \(error.localizedDescription); give a writable --out DIR")
        }
        for number in 1...1000 {
            let path = number == 1 ? stamp : stamp + "-\(number)"
            if mkdir(path, 0o777) == 0 { return path }
            let code = errno
            guard code == EEXIST else {
                throw RunFailure.usage("cannot create \(path) (the default --out): \(String(cString: strerror(code))); give a writable --out DIR")
            }
        }
        throw RunFailure.usage("\(stamp) and its next 999 numbered names are taken: give --out DIR")
    }
}

extension SendSetup {
    /// `--rate` and `--spread`: one or the other, a positive rate, a duration with units, and for
    /// `--spread` an input the prescan counts (the rate is its row count over the duration).
    /// `--spread 0s` (any zero duration) means no spread, as if it were not given.
    static func pace(_ command: SendCommand, configuration: inout CampaignConfiguration) throws {
        var spread: (text: String, seconds: Double)?
        if let text = command.spread {
            guard let seconds = PacerDuration.seconds(parsing: text) else {
                throw RunFailure.usage("--spread \(text): give a duration with units (h, m and s, largest first), such as 90s, 30m, 2h or 1h30m; 0s means no spread")
            }
            if seconds > 0 { spread = (text, seconds) }
        }
        if command.rate != nil && spread != nil {
            throw RunFailure.usage("--rate and --spread both set the pace: give one (--rate N per second, or --spread DURATION for the whole campaign)")
        }
        if let rate = command.rate {
            guard rate > 0, rate.isFinite else {
                throw RunFailure.usage("--rate \(rate): give a positive number of notifications per second, such as 500 or 0.5")
            }
            configuration.rate = rate
        }
        if let spread {
            guard configuration.prescan else {
                let why = command.noPrescan ? "--no-prescan is given" : "--input \(command.input) is a stream (stdin or a pipe), read only once"
                throw RunFailure.usage("--spread \(spread.text): it picks the rate from the row count, which the prescan finds, "
                                       + "and \(why): give --rate N instead, or a regular file without --no-prescan")
            }
            configuration.spreadSeconds = spread.seconds
        }
    }
}

extension SendSetup {
    /// `--dry-run`'s offline check of the credentials, as far as they can be checked without
    /// APNs: a signing key has signed a provider token (TokenSource's first), and the key's own
    /// public half must verify it; a client certificate must match its key and be valid today,
    /// or APNs would refuse every connection.
    static func checkDryRun(_ command: SendCommand, credentials: SendCredentials) throws {
        if command.output.resume {
            throw RunFailure.usage("--dry-run with --resume: a dry run sends nothing, so there is no campaign to resume; leave one of them off")
        }
        for key in credentials.keys {
            do {
                let verifier = try TokenVerifier(signingKey: key.signingKey, keyID: key.source.keyID, teamID: key.source.teamID)
                _ = try verifier.verify(key.source.current.jwt)
            } catch {
                throw RunFailure.usage("--key-file \(key.entry.key.file): a provider token it signed does not verify with its own public key (\(error)); give the .p8 key downloaded from Apple")
            }
        }
        for certificate in credentials.certificates {
            let file = certificate.file
            let identity = certificate.identity
            guard identity.keyMatchesCertificate else {
                throw RunFailure.usage("\(file): its private key does not belong to its certificate; export the certificate together with its own key")
            }
            let validity = identity.validity
            if validity.expired {
                throw RunFailure.usage("\(file): the certificate expired on \(validity.notAfter) (by this machine's clock); APNs refuses it: renew it in Apple's developer account")
            }
            if validity.notYetValid {
                throw RunFailure.usage("\(file): the certificate is not valid yet by this machine's clock; check the clock, or wait")
            }
        }
    }

    /// `--endpoint mock` in a dry run with several credentials: no mock starts, but each
    /// environment one would play gets a stand-in endpoint ("mock:0", never connected to), so the
    /// dry run routes rows as the rehearsal would instead of finding their environment unserved.
    static func dryRunMocks(_ environments: [APNsEnvironment], _ endpoints: inout [Endpoint],
                            _ endpointEnvironments: inout [APNsEnvironment], _ proxies: inout [HTTPProxy?]) {
        for environment in environments {
            endpoints.append(Endpoint(host: "mock", port: 0))
            endpointEnvironments.append(environment)
            proxies.append(nil)
        }
    }
}
