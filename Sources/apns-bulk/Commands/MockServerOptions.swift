import Foundation
import APNs
import ArgumentParser
import MockAPNs
import Transport

/// The mock APNs server's flags, shared by `apns-bulk mock-server` and `send --endpoint mock`
/// (whose job-file `[mock]` table is parsed with `MockServerOptions.parse([...])`).
struct MockServerOptions: ParsableArguments {
    @Option(help: "Address to listen on, HOST:PORT; port 0 picks a free port.")
    var listen = "127.0.0.1:0"

    @Option(name: .customLong("tls-cert"), help: "Server certificate chain (PEM). Without it, an ephemeral CA issues one. Default: none.")
    var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: "Private key (PEM) of --tls-cert. Default: none.")
    var tlsKey: String?

    @Option(name: .customLong("ca-out"), help: "Write the ephemeral CA certificate here, for clients' --ca-file. Default: none.")
    var caOut: String?

    @Option(name: .customLong("verify-key-file"), help: "Verify provider tokens against this signing key (.p8) or its public key (PEM); repeatable. With several, each file's name must be Apple's AuthKey_<KEYID>.p8, which gives its key id. Default: none; the signature is not checked then.")
    var verifyKeyFile: [String] = []

    @Option(name: .customLong("key-id"), help: "With one --verify-key-file: the key id its tokens carry. Default: the one in the file's name AuthKey_<KEYID>.p8.")
    var keyID: String?

    @Option(name: .customLong("team-id"), help: "The team id tokens must carry: for every --verify-key-file, and for the --keys-file entries without their own. Default: none.")
    var teamID: String?

    @Option(name: .customLong("keys-file"), help: "Verify provider tokens of the keys listed as [[keys]] tables in this TOML file, in send's format: file, key-id, team-id, environment, topics, related-key-id; a send job file will do. A key restricted to the other --environment is answered BadEnvironmentKeyIdInToken, a topic outside its topics TopicDisallowed, and a token of a key not related to the connection's first UnrelatedKeyIdInToken. Default: none.")
    var keysFile: String?

    @Option(name: .customLong("topic"), help: "A bundle id served (repeatable); its push-type suffixes are allowed too. Default: none; any topic.")
    var topics: [String] = []

    @Option(name: .customLong("unregistered-file"), help: "Lines device_token[,timestamp_ms]: answered 410 Unregistered. Default: none.")
    var unregisteredFile: String?

    @Option(name: .customLong("respond-file"), help: "Lines device_token,status,reason[,times]: scripted answers. Default: none.")
    var respondFile: String?

    @Option(name: .customLong("max-streams"), help: "SETTINGS_MAX_CONCURRENT_STREAMS once a connection is authorized.")
    var maxStreams = 1000

    @Option(name: .customLong("initial-max-streams"), help: "SETTINGS_MAX_CONCURRENT_STREAMS of a new token-auth connection.")
    var initialMaxStreams = 1

    @Option(name: .customLong("latency-ms"), help: "Delay every answer by this many milliseconds.")
    var latencyMs = 0

    @Option(name: .customLong("latency-jitter-ms"), help: "Add a random 0...N ms to each delay.")
    var latencyJitterMs = 0

    @Option(name: .customLong("fail"), help: "Random server errors, e.g. 500:0.01,503:0.005. Default: none.")
    var fail: String?

    @Option(name: .customLong("too-many-requests"), help: "Rate (0...1) of 429 TooManyRequests.")
    var tooManyRequests = 0.0

    @Option(name: .customLong("refuse-streams"), help: "Rate (0...1) of streams reset with REFUSED_STREAM.")
    var refuseStreams = 0.0

    @Option(name: .customLong("goaway-after"), help: "Send GOAWAY (Shutdown) after each connection's N-th request. Default: never.")
    var goawayAfter: Int?

    @Option(name: .customLong("reset-after"), help: "Reset the TCP connection after each connection's N-th request. Default: never.")
    var resetAfter: Int?

    @Option(name: .customLong("stall-after"), help: "Stop reading a connection after its N-th request. Default: never.")
    var stallAfter: Int?

    @Flag(name: .customLong("throttle-after-errors"), help: "Drop a connection to one stream after a rejected notification.")
    var throttleAfterErrors = false

    @Option(help: "Seed of the random faults: a fault is a function of seed, device token and attempt.")
    var seed: UInt64 = 0

    @Option(name: .customLong("client-ca"), help: "Require client certificates issued by this CA (certificate mode). Default: none; token auth.")
    var clientCA: String?

    @Option(name: .customLong("stats-out"), help: "Write counters as JSON here when the server stops. Default: none.")
    var statsOut: String?

    @Option(name: .customLong("record-out"), help: "Record one JSON line per request here, as zstd-compressed .jsonl.zst. Default: none.")
    var recordOut: String?
    @Flag(name: .customLong("record-payloads"), help: "With --record-out, also record each request's payload, as a JSON string.")
    var recordPayloads = false

    @Option(name: .customLong("environment"), help: "The APNs environment to play, production or sandbox. A key restricted to the other one is answered BadEnvironmentKeyIdInToken. In sandbox every answer carries an apns-unique-id header with a fresh UUID, as Apple's Development environment sends; production sends none.")
    var environment = "production"

    @Option(name: .customLong("management-listen"), help: "Serve Live Activity channel management (/1/apps/...) on a listener of its own at HOST:PORT, as Apple's management hosts are apart from the push hosts; --listen then serves device pushes and broadcasts only. Default: none; --listen serves all three.")
    var managementListen: String?

    @Option(name: .customLong("max-channels"), help: "Live Activity channels kept per app; one more create is 400 CannotCreateChannelConfig.")
    var maxChannels = BroadcastRules.maxChannelsPerApp

    @Flag(name: .customLong("admit-any-channel"), help: "Take a broadcast to any well-formed (base64) channel id as to an existing channel that stores the most recent message, created or not. Read and delete still know only the channels created.")
    var admitAnyChannel = false

    @Option(name: .customLong("broadcast-disabled-app"), help: "A bundle id whose broadcast capability is not enabled (repeatable): its broadcasts and channel requests are answered 400 FeatureNotEnabled. Default: none.")
    var broadcastDisabledApps: [String] = []

    @Option(name: .customLong("legacy-binary-listen"), help: "Also run Apple's retired binary gateway at HOST:PORT: command-2 frames, client certificates from --client-ca. Default: none; off.")
    var legacyBinaryListen: String?

    @Option(name: .customLong("feedback-listen"), help: "Also run Apple's retired feedback service at HOST:PORT: it sends the --unregistered-file tokens as feedback tuples. Default: none; off.")
    var feedbackListen: String?

    @Option(name: .customLong("binary-fail"), help: "Binary gateway: error statuses at random, as STATUS:RATE pairs, e.g. 1:0.01,255:0.005. Default: none.")
    var binaryFail: String?

    @Option(name: .customLong("binary-shutdown-after"), help: "Binary gateway: once, after the N-th notification accepted, answer status 10 (shutdown) and close. Default: never.")
    var binaryShutdownAfter: Int?

    @Option(name: .customLong("binary-close-after"), help: "Binary gateway: once, after the N-th notification accepted, close the connection with no error response. Default: never.")
    var binaryCloseAfter: Int?

    @Option(name: .customLong("feedback-cut-bytes"), help: "Feedback service: leave this many bytes off the end, so the last tuple arrives truncated. Default: none.")
    var feedbackCutBytesChoice: Int?
    var feedbackCutBytes: Int { feedbackCutBytesChoice ?? 0 }

    @Option(name: .customLong("binary-record-out"), help: "Binary gateway: when the server stops, write one JSON line per frame received to this file: accepted, refused or discarded. Default: none.")
    var binaryRecordOut: String?

    /// The retired protocols' listeners and faults (issue 15), checked like the other flags.
    func legacyConfiguration() throws -> MockLegacyConfiguration {
        var legacy = MockLegacyConfiguration()
        legacy.binaryAddress = try legacyBinaryListen.map { try Self.address($0, flag: "--legacy-binary-listen") }
        legacy.feedbackAddress = try feedbackListen.map { try Self.address($0, flag: "--feedback-listen") }
        if let binaryFail {
            switch Result(catching: { () throws(MockAPNsError) in try MockLegacyConfiguration.failures(binaryFail) }) {
            case .success(let failures): legacy.failures = failures
            case .failure(let error): throw RunFailure.usage(error.description)
            }
        }
        for (name, value) in [("--binary-shutdown-after", binaryShutdownAfter), ("--binary-close-after", binaryCloseAfter)] {
            if let value { try Self.require(value >= 1, "\(name) \(value): give a notification count of 1 or more") }
        }
        try Self.require(feedbackCutBytes >= 0, "--feedback-cut-bytes \(feedbackCutBytes): give 0 or more bytes")
        legacy.shutdownAfter = binaryShutdownAfter
        legacy.closeAfter = binaryCloseAfter
        legacy.feedbackCutBytes = feedbackCutBytes
        legacy.recordPath = binaryRecordOut
        if legacy.isEnabled && clientCA == nil {
            throw RunFailure.usage("--legacy-binary-listen/--feedback-listen: Apple's binary gateway and feedback service authenticate by client certificate only; give --client-ca CA.pem too")
        }
        return legacy
    }

    /// The configuration these flags describe, with every file read. Throws `RunFailure.usage`
    /// naming the flag and the fix.
    func configuration() throws -> MockAPNsConfiguration {
        var configuration = MockAPNsConfiguration()
        configuration.startedAtMilliseconds = WallClock.seconds() * 1000
        configuration.address = try Self.address(listen)
        do {
            try fillIdentity(&configuration)
            try fillAuthentication(&configuration)
            configuration.topics = Set(topics)
            if let unregisteredFile {
                configuration.unregistered = try MockAPNsFiles.unregistered(
                    path: unregisteredFile, defaultTimestamp: configuration.startedAtMilliseconds)
            }
            if let respondFile { configuration.scripted = try MockAPNsFiles.scripted(path: respondFile) }
            if let fail { configuration.failures = try MockAPNsFiles.failures(fail) }
        } catch let error as MockAPNsError {
            throw RunFailure.usage(error.description)
        }
        try Self.require(maxStreams >= 1, "--max-streams \(maxStreams): give at least 1")
        try Self.require(initialMaxStreams >= 1, "--initial-max-streams \(initialMaxStreams): give at least 1")
        try Self.require(latencyMs >= 0 && latencyJitterMs >= 0, "--latency-ms/--latency-jitter-ms: give milliseconds, 0 or more")
        try Self.require((0...1).contains(tooManyRequests), "--too-many-requests \(tooManyRequests): give a rate in 0...1")
        try Self.require((0...1).contains(refuseStreams), "--refuse-streams \(refuseStreams): give a rate in 0...1")
        for (name, value) in [("--goaway-after", goawayAfter), ("--reset-after", resetAfter), ("--stall-after", stallAfter)] {
            if let value { try Self.require(value >= 1, "\(name) \(value): give a request count of 1 or more") }
        }
        configuration.maxStreams = maxStreams
        configuration.initialMaxStreams = initialMaxStreams
        configuration.latencyMilliseconds = latencyMs
        configuration.latencyJitterMilliseconds = latencyJitterMs
        configuration.tooManyRequestsRate = tooManyRequests
        configuration.refuseStreamsRate = refuseStreams
        configuration.goawayAfter = goawayAfter
        configuration.resetAfter = resetAfter
        configuration.stallAfter = stallAfter
        configuration.throttleAfterErrors = throttleAfterErrors
        configuration.seed = seed
        configuration.statsOutPath = statsOut
        configuration.recordOutPath = recordOut
        configuration.recordPayloads = recordPayloads
        guard let environment = MockAPNsEnvironment(rawValue: environment) else {
            throw RunFailure.usage("--environment \(environment): give production or sandbox")
        }
        configuration.environment = environment
        try Self.require(maxChannels >= 0, "--max-channels \(maxChannels): give 0 or more channels per app")
        configuration.maxChannelsPerApp = maxChannels
        configuration.managementAddress = try managementListen.map { try Self.address($0, flag: "--management-listen") }
        configuration.admitAnyChannel = admitAnyChannel
        configuration.broadcastDisabledApps = Set(broadcastDisabledApps)
        return configuration
    }

    private func fillIdentity(_ configuration: inout MockAPNsConfiguration) throws {
        switch (tlsCert, tlsKey) {
        case let (certificate?, key?):
            if caOut != nil { throw RunFailure.usage("--ca-out: only the ephemeral certificate has a CA to write; drop --ca-out or --tls-cert/--tls-key") }
            configuration.identity = .pemFiles(certificate: certificate, key: key)
        case (nil, nil):
            configuration.identity = .ephemeral(hosts: ["127.0.0.1", "::1", "localhost"])
            configuration.caOutPath = caOut
        default:
            throw RunFailure.usage("--tls-cert and --tls-key go together: give both, or neither for an ephemeral certificate")
        }
    }

    private func fillAuthentication(_ configuration: inout MockAPNsConfiguration) throws {
        let verifies = !verifyKeyFile.isEmpty || keysFile != nil
        if let clientCA {
            if verifies { throw RunFailure.usage("--client-ca and --verify-key-file/--keys-file exclude each other: certificate mode checks no tokens") }
            configuration.authentication = .certificate(.caFile(clientCA))
            return
        }
        guard verifies else {
            if keyID != nil || teamID != nil { throw RunFailure.usage("--key-id/--team-id need --verify-key-file (or --keys-file)") }
            configuration.authentication = .tokenPresenceOnly
            return
        }
        if keyID != nil && verifyKeyFile.isEmpty { throw RunFailure.usage("--key-id needs --verify-key-file; a --keys-file entry names its own key-id") }
        var entries = try KeyList.commandLine(files: verifyKeyFile, keyID: keyID, teamID: teamID, fileFlag: "--verify-key-file")
        if let keysFile {
            entries += try KeyList.entries(in: JobFile.load(keysFile, flag: "--keys-file"), source: "--keys-file \(keysFile)",
                                           defaultTeamID: teamID)
            if entries.isEmpty { throw RunFailure.usage("--keys-file \(keysFile): no [[keys]] table in it; list each key as [[keys]] with file, key-id and team-id") }
        }
        try KeyList.check(entries)
        var keys: [MockTokenKey] = []
        for entry in entries {
            let key = entry.key
            do {
                let verifier = try Self.verifier(key.file, keyID: ProviderToken.KeyID(key.keyID), teamID: ProviderToken.TeamID(key.teamID))
                keys.append(MockTokenKey(verifier: verifier, environment: key.environment, topics: key.topics.map(Set.init),
                                         relatedKeyID: key.relatedKeyID))
            } catch let error as ProviderTokenError {
                throw RunFailure.usage("\(entry.origin): \(error.message)")
            } catch let error as SigningKeyError {
                throw RunFailure.usage("\(entry.origin): \(error.message)")
            }
        }
        if keys.count == 1, keys[0].environment == nil, keys[0].topics == nil {
            configuration.authentication = .token(keys[0].verifier)
        } else {
            configuration.authentication = .keys(keys)
        }
    }

    /// A verifier from a `.p8` signing key, or from a "BEGIN PUBLIC KEY" PEM file.
    private static func verifier(_ path: String, keyID: ProviderToken.KeyID, teamID: ProviderToken.TeamID) throws -> TokenVerifier {
        if let text = try? String(contentsOfFile: path, encoding: .utf8), text.contains("BEGIN PUBLIC KEY") {
            return try TokenVerifier(publicKeyPEM: text, keyID: keyID, teamID: teamID)
        }
        return try TokenVerifier(signingKey: SigningKey(contentsOfFile: path), keyID: keyID, teamID: teamID)
    }

    /// HOST:PORT with an IP literal host ("[::1]:443" for IPv6).
    static func address(_ text: String, flag: String = "--listen") throws -> SocketAddress {
        guard let colon = text.lastIndex(of: ":") else {
            throw RunFailure.usage("\(flag) \(text): give HOST:PORT, e.g. 127.0.0.1:2197 (port 0 picks a free one)")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" { host = "127.0.0.1" }
        guard let port = UInt16(text[text.index(after: colon)...]),
              let address = SocketAddress(ip: host, port: port) else {
            throw RunFailure.usage("\(flag) \(text): give an IP address and a port 0-65535, e.g. 127.0.0.1:2197")
        }
        return address
    }

    private static func require(_ condition: Bool, _ message: String) throws {
        if !condition { throw RunFailure.usage(message) }
    }
}
