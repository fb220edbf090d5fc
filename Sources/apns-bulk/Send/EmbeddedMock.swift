import APNs
import ArgumentParser
import Foundation
import MockAPNs
import Transport

/// `send --endpoint mock`: the MockAPNs server in this process on a loopback port, with a fresh CA,
/// checking the run's own credentials as APNs would: its provider tokens against its key, or its
/// client certificate against that certificate's issuer (TLS refuses a certificate out of its
/// dates or not issued so). A `verify-key-file` or `client-ca` among the mock's options is
/// honoured instead, so that a refusal ("credentials refused", exit 2) can be rehearsed. The
/// command line starts it and hands the pipeline an ordinary endpoint and CA file, so the pipeline
/// never knows it is talking to a mock. It is reached directly, never through a proxy.
struct EmbeddedMock {
    /// Identity of the fresh signing key made when no credentials are given.
    static let keyID = "MOCKKEY001"
    static let teamID = "MOCKTEAM01"
    static let defaultTopic = "com.example.demo"

    let server: MockAPNsServer
    let endpoint: Endpoint
    let caFile: String

    /// `options` are mock-server flags as `name=value` or `name` (from `--mock-option`, which a
    /// job file's [mock] table fills). The mock plays `environment` (unless `options` name one)
    /// and verifies the tokens of every one of `keys`, or client certificates issued as one of
    /// `clientIdentities` is, serving the apps they name (`topic`: the run's, for a certificate
    /// that names none).
    /// `fileTag`, for a second mock of the run, goes into the names of its record and stats files
    /// ("record.jsonl.zst" becomes "record.sandbox.jsonl.zst"), so that two mocks never write one file.
    static func start(options: [String], keys: [MockTokenKey], clientIdentities: [TLSIdentity], topic: String?,
                      environment: APNsEnvironment = .production, fileTag: String? = nil) throws -> EmbeddedMock {
        var arguments: [String] = []
        for option in options {
            let parts = option.split(separator: "=", maxSplits: 1).map(String.init)
            arguments.append("--" + parts[0])
            if parts.count == 2 { arguments.append(parts[1]) }
        }
        let parsed: MockServerOptions
        do {
            parsed = try MockServerOptions.parse(arguments)
        } catch {
            throw RunFailure.usage("[mock] settings: \(MockServerOptions.message(for: error))")
        }
        var configuration = try parsed.configuration()
        // Each mock plays its own environment; an `environment` among the settings wins, to
        // rehearse a key used in the wrong one.
        if !arguments.contains("--environment"), let played = MockAPNsEnvironment(rawValue: environment.rawValue) {
            configuration.environment = played
        }
        if let fileTag {
            configuration.recordOutPath = configuration.recordOutPath.map { Self.tagged($0, fileTag) }
            configuration.statsOutPath = configuration.statsOutPath.map { Self.tagged($0, fileTag) }
        }
        configuration.address = .loopback(port: 0)
        configuration.identity = .ephemeral(hosts: ["127.0.0.1"])
        let caFile = FileManager.default.temporaryDirectory
            .appendingPathComponent("apns-bulk-mock-ca-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).pem").path
        configuration.caOutPath = caFile
        // The mock's own verify-key-file or client-ca wins: the run's credentials may be refused.
        let mockChecksItsOwn = !parsed.verifyKeyFile.isEmpty || parsed.keysFile != nil || parsed.clientCA != nil
        if !mockChecksItsOwn, let clientIdentity = clientIdentities.first {
            configuration.authentication = .certificate(clientIdentities.count == 1 ? .issuerOf(clientIdentity)
                                                                                    : .issuersOf(clientIdentities))
            // A push certificate names its apps (its topics extension, or the subject's UID), as for APNs.
            if configuration.topics.isEmpty {
                configuration.topics = Set(clientIdentities.flatMap(\.pushClaims.topics))
            }
        } else if !mockChecksItsOwn, !keys.isEmpty {
            let unrestricted = keys.count == 1 && keys[0].environment == nil && keys[0].topics == nil
            configuration.authentication = unrestricted ? .token(keys[0].verifier) : .keys(keys)
        }
        // Without --topic in the mock's settings it serves every topic the run's credentials serve,
        // as APNs would: a certificate's apps (or, naming none, the run's topic); each key's own
        // topics, and any topic for a team-scoped (or the generated) key, whose apps only Apple
        // knows. Rows of several apps (a topic column) are then never TopicDisallowed here.
        if configuration.topics.isEmpty, configuration.usesCertificates, let topic { configuration.topics = [topic] }
        let server: MockAPNsServer
        do {
            server = try MockAPNsServer.start(configuration)
        } catch {
            throw RunFailure.usage("--endpoint mock: \(error)")
        }
        return EmbeddedMock(server: server, endpoint: Endpoint(host: "127.0.0.1", port: server.port), caFile: caFile)
    }

    func stop() {
        _ = try? server.stop()
        unlink(caFile)
    }

    /// `path` with `tag` before the first dot of its file name (or at its end).
    static func tagged(_ path: String, _ tag: String) -> String {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        guard let dot = path[slash...].firstIndex(of: "."), dot != slash else { return path + "." + tag }
        return String(path[..<dot]) + "." + tag + String(path[dot...])
    }
}

/// The embedded mocks of one run, one per environment it needs, and one CA file the client
/// trusts for all of them. Stopping stops each and removes the files.
struct EmbeddedMocks {
    let mocks: [(environment: APNsEnvironment, mock: EmbeddedMock)]
    /// The file of every mock's CA certificate.
    let caFile: String

    static func start(environments: [APNsEnvironment], options: [String], keys: [MockTokenKey],
                      clientIdentities: [TLSIdentity], topic: String?) throws -> EmbeddedMocks {
        var mocks: [(environment: APNsEnvironment, mock: EmbeddedMock)] = []
        do {
            for (index, environment) in environments.enumerated() {
                mocks.append((environment, try EmbeddedMock.start(options: options, keys: keys, clientIdentities: clientIdentities,
                                                                  topic: topic, environment: environment,
                                                                  fileTag: index == 0 ? nil : environment.rawValue)))
            }
        } catch {
            for started in mocks { started.mock.stop() }
            throw error
        }
        guard mocks.count > 1 else { return EmbeddedMocks(mocks: mocks, caFile: mocks[0].mock.caFile) }
        let combined = FileManager.default.temporaryDirectory
            .appendingPathComponent("apns-bulk-mock-cas-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).pem").path
        let text = mocks.compactMap { try? String(contentsOfFile: $0.mock.caFile, encoding: .utf8) }.joined()
        guard (try? text.write(toFile: combined, atomically: true, encoding: .utf8)) != nil else {
            for started in mocks { started.mock.stop() }
            throw RunFailure.usage("--endpoint mock: cannot write the mocks' CA file \(combined)")
        }
        return EmbeddedMocks(mocks: mocks, caFile: combined)
    }

    func stop() {
        for started in mocks { started.mock.stop() }
        if mocks.count > 1 { unlink(caFile) }
    }
}
