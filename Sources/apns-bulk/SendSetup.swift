import APNs
import Foundation
import Pipeline
import Transport

/// Turns `send`'s flags into a `CampaignConfiguration`, finding every configuration error before
/// anything is sent (exit 1, with a message naming the flag and the fix). Starts the embedded mock
/// for `--endpoint mock`.
struct SendSetup {
    var configuration: CampaignConfiguration
    var mock: EmbeddedMock?

    init(command: SendCommand) throws {
        let endpointNames = command.endpoint.isEmpty ? ["production"] : command.endpoint
        let binary = command.wireProtocol == .binary
        if binary { try Self.checkBinary(command, endpoints: endpointNames) }
        try Self.checkCounts(command)
        let shard: Shard?
        do { shard = try command.shard.map { text throws(Shard.ParseError) in try Shard(parsing: text) } } catch {
            throw RunFailure.usage(error.description)
        }
        try Self.checkConnections(command.connections, endpoints: endpointNames.count)
        let defaults = try Self.headerDefaults(command)
        let payload = try command.payloadFile.map { try Self.loadPayload($0, pushType: defaults.pushType) }
        if command.payloadFile != nil && command.payloadTemplate != nil {
            throw RunFailure.usage("give --payload-file or --payload-template, not both: both fill the rows whose payload is empty")
        }
        let template = try command.payloadTemplate.map { try Self.loadTemplate($0) }

        // Credentials: exactly one kind, or none at all when every endpoint is the embedded mock.
        let usesToken = command.keyFile != nil || command.keyID != nil || command.teamID != nil
        let usesPEM = command.certFile != nil || command.certKeyFile != nil
        let usesP12 = command.p12File != nil
        if [usesToken, usesPEM, usesP12].filter({ $0 }).count > 1 {
            throw RunFailure.usage("give one kind of credentials: --key-file/--key-id/--team-id, or --cert-file/--cert-key-file, or --p12-file")
        }
        let onlyMock = endpointNames.allSatisfy { $0 == "mock" }
        let tokenSource: TokenSource?
        var signingKey: SigningKey?
        var identity: TLSIdentity?
        if usesToken {
            (tokenSource, signingKey) = try Self.tokenSource(command)
        } else if usesPEM || usesP12 {
            identity = try Self.clientIdentity(command)
            tokenSource = nil
        } else if onlyMock {
            // Rehearsal with no Apple account: a fresh key that the embedded mock trusts.
            let key: SigningKey
            do { key = try SigningKey.generate() } catch { throw RunFailure.usage(error.message) }
            signingKey = key
            tokenSource = try Self.makeTokenSource(key: key, keyID: EmbeddedMock.keyID, teamID: EmbeddedMock.teamID)
        } else {
            throw RunFailure.usage("no credentials: give --key-file K.p8 --key-id KID --team-id TEAM (token auth), or --cert-file C.pem --cert-key-file K.pem, or --p12-file F.p12")
        }

        // Endpoints; `mock` becomes the address of an in-process mock with its own CA.
        var endpoints: [Endpoint] = []
        var extraTrust: [String] = command.caFile.map { [$0] } ?? []
        if let caFile = command.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw RunFailure.usage("--ca-file \(caFile): cannot read it; give a PEM file of CA certificates")
        }
        var mock: EmbeddedMock?
        let proxySettings = try Self.proxySettings(command)
        var proxies: [HTTPProxy?] = []
        for name in endpointNames {
            // The embedded mock lives in this process: never through a proxy.
            proxies.append(nil)
            if name == "mock" {
                if command.dryRun { continue }  // a dry run connects to nothing: no mock to start
                if mock == nil {
                    mock = try EmbeddedMock.start(options: command.mockOptions, signingKey: signingKey,
                                                  keyID: tokenSource?.keyID.value, teamID: tokenSource?.teamID.value,
                                                  clientIdentity: identity, topic: defaults.topic)
                }
                endpoints.append(mock!.endpoint)
                extraTrust.append(mock!.caFile)
                continue
            }
            if binary, let gateway = Self.binaryGateways[name] {
                endpoints.append(gateway)
                continue
            }
            do {
                endpoints.append(try Endpoint(parsing: name))
                proxies[proxies.count - 1] = proxySettings.proxy(for: endpoints[endpoints.count - 1])
            } catch {
                throw RunFailure.usage("--endpoint \(name): \(error.reason); use production, sandbox, HOST:PORT, [IPv6]:PORT or mock")
            }
        }
        if mock != nil, let flag = command.proxy, !flag.isEmpty {
            writeStandardError("warning: --endpoint mock runs inside this process and is reached directly, not through --proxy\n")
        }
        if extraTrust.count > 1 {
            throw RunFailure.usage("--ca-file cannot be combined with --endpoint mock (the mock brings its own CA)")
        }
        let tls: TLSContext
        do {
            tls = try TLSContext.client(additionalTrust: extraTrust.first.map { .caFile($0) }, identity: identity,
                                        offersH2: !binary)
        } catch {
            throw RunFailure.usage("TLS setup: \(error)")
        }

        let authentication: CampaignConfiguration.Authentication = tokenSource.map { .token($0) } ?? .certificate
        var configuration = CampaignConfiguration(
            inputPath: command.input, authentication: authentication, endpoints: endpoints, tls: tls,
            outputDirectory: command.out ?? Self.defaultOutputDirectory())
        // A stream (stdin, a named pipe) can be read only once: no prescan, progress without an ETA.
        configuration.prescan = !command.noPrescan && !CSVSource.isStream(path: command.input)
        configuration.resume = command.resume
        configuration.allowDuplicates = command.allowDuplicates
        configuration.shard = shard
        configuration.defaultPayload = payload
        configuration.payloadTemplate = template
        configuration.defaults = defaults
        configuration.proxies = proxies
        configuration.connections = command.connections
        configuration.maxStreams = command.maxStreams
        configuration.reactorThreads = command.threads ?? Self.usableCores()
        configuration.maxAttempts = command.maxAttempts
        configuration.retryBaseMilliseconds = command.retryBaseMs
        configuration.retryMaxMilliseconds = command.retryMaxMs
        configuration.reconnectBaseMilliseconds = command.reconnectBaseMs
        configuration.reconnectMaxMilliseconds = command.reconnectMaxMs
        configuration.abortAfter = command.abortAfter
        configuration.unreachableTimeoutSeconds = command.unreachableTimeout
        configuration.responseTimeoutSeconds = command.responseTimeout
        configuration.pingIntervalSeconds = command.pingInterval
        try Self.pace(command, configuration: &configuration)
        if command.dryRun { try Self.checkDryRun(command, tokenSource: tokenSource, key: signingKey, identity: identity) }
        configuration.dryRun = command.dryRun
        if binary {
            configuration.wireProtocol = .binary
            configuration.binaryQuietMilliseconds = command.binaryQuietMs
            configuration.binaryWindow = command.binaryWindow
        }
        switch command.progress {
        case .always: configuration.showProgress = true
        case .never: configuration.showProgress = false
        case .auto: configuration.showProgress = isatty(2) == 1
        }
        configuration.metrics = try Self.metricsOptions(command, shard: shard)
        if !usesToken && !usesPEM && !usesP12 && configuration.defaults.topic == nil {
            configuration.defaults.topic = EmbeddedMock.defaultTopic
        }
        self.configuration = configuration
        self.mock = mock
    }

    /// `--proxy`/`--noproxy`, else the environment's, as curl reads them (`ProxySettings`).
    private static func proxySettings(_ command: SendCommand) throws -> ProxySettings {
        do {
            return try ProxySettings(proxyFlag: command.proxy, noProxyFlag: command.noproxy,
                                     environment: ProcessInfo.processInfo.environment)
        } catch {
            throw RunFailure.usage(error.description)
        }
    }

    private static func checkCounts(_ command: SendCommand) throws {
        let positive: [(String, Int)] = [("--connections", command.connections), ("--max-streams", command.maxStreams),
                                         ("--max-attempts", command.maxAttempts), ("--retry-base-ms", command.retryBaseMs),
                                         ("--retry-max-ms", command.retryMaxMs), ("--abort-after", command.abortAfter),
                                         ("--reconnect-base-ms", command.reconnectBaseMs),
                                         ("--reconnect-max-ms", command.reconnectMaxMs)]
        for (flag, value) in positive where value < 1 {
            throw RunFailure.usage("\(flag) \(value): must be at least 1")
        }
        if let threads = command.threads, threads < 1 { throw RunFailure.usage("--threads \(threads): must be at least 1") }
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
        return bytes
    }

    /// The template file, split and checked: with every placeholder empty it must be a JSON object.
    private static func loadTemplate(_ path: String) throws -> PayloadTemplate {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw RunFailure.usage("--payload-template \(path): cannot read it; give a file holding one JSON object with {{column}} placeholders in its strings")
        }
        let template: PayloadTemplate
        do { template = try PayloadTemplate(json: [UInt8](data)) } catch {
            throw RunFailure.usage("--payload-template \(path): \(error.description)")
        }
        if let reason = HeaderRules.checkPayload(template.emptyFilled, pushType: .voip), reason != .payloadTooLarge {
            let detail = reason == .payloadEmpty ? "it is empty" : "it is not a JSON object (with its placeholders empty)"
            throw RunFailure.usage("--payload-template \(path): \(detail) (\(reason.name))")
        }
        return template
    }

    private static func tokenSource(_ command: SendCommand) throws -> (TokenSource, SigningKey) {
        guard let keyFile = command.keyFile, let keyID = command.keyID, let teamID = command.teamID else {
            throw RunFailure.usage("token auth needs all three of --key-file, --key-id and --team-id")
        }
        let key: SigningKey
        do { key = try SigningKey(contentsOfFile: keyFile) } catch { throw RunFailure.usage(error.message) }
        return (try makeTokenSource(key: key, keyID: keyID, teamID: teamID), key)
    }

    private static func makeTokenSource(key: SigningKey, keyID: String, teamID: String) throws -> TokenSource {
        do {
            return try TokenSource(signingKey: key, keyID: ProviderToken.KeyID(keyID),
                                   teamID: ProviderToken.TeamID(teamID))
        } catch let error as ProviderTokenError {
            throw RunFailure.usage(error.message)
        } catch let error as SigningKeyError {
            throw RunFailure.usage(error.message)
        }
    }

    private static func clientIdentity(_ command: SendCommand) throws -> TLSIdentity {
        let credentials: ClientCredentials
        if let p12 = command.p12File {
            var password = ""
            if let variable = command.p12PasswordEnv {
                guard let value = ProcessInfo.processInfo.environment[variable] else {
                    throw RunFailure.usage("--p12-password-env \(variable): that environment variable is not set")
                }
                password = value
            }
            credentials = .pkcs12(file: p12, password: password)
        } else {
            guard let cert = command.certFile, let key = command.certKeyFile else {
                throw RunFailure.usage("certificate auth needs both --cert-file and --cert-key-file (or a --p12-file)")
            }
            credentials = .pem(certificateFile: cert, keyFile: key)
        }
        do { return try credentials.load() } catch { throw RunFailure.usage("client certificate: \(error)") }
    }

    /// Cores this process may run on: its affinity mask (taskset, a container's cpuset), which
    /// `activeProcessorCount` ignores. More reactor threads than usable cores only adds context
    /// switches (benchmarks/RESULTS.md). Falls back to the online processor count.
    static func usableCores() -> Int {
        let online = max(1, ProcessInfo.processInfo.activeProcessorCount)
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") })
        else { return online }
        let mask = line.dropFirst("Cpus_allowed:".count)
        let allowed = mask.reduce(0) { count, character in count + (character.hexDigitValue ?? 0).nonzeroBitCount }
        return allowed > 0 ? min(allowed, online) : online
    }

    static func defaultOutputDirectory() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return "./apns-bulk-out/" + formatter.string(from: Date())
    }
}
