import APNs
import ArgumentParser
import Foundation
import MockAPNs
import Transport

/// `send --endpoint mock`: the MockAPNs server in this process on a loopback port, with a fresh CA,
/// verifying the run's own provider tokens. The command line starts it and hands the pipeline an
/// ordinary endpoint and CA file, so the pipeline never knows it is talking to a mock.
struct EmbeddedMock {
    /// Identity of the fresh signing key made when no credentials are given.
    static let keyID = "MOCKKEY001"
    static let teamID = "MOCKTEAM01"
    static let defaultTopic = "com.example.demo"

    let server: MockAPNsServer
    let endpoint: Endpoint
    let caFile: String

    /// `options` are mock-server flags as `name=value` or `name` (from `--mock-option`, which a
    /// job file's [mock] table fills).
    static func start(options: [String], signingKey: SigningKey?, keyID: String?, teamID: String?,
                      clientCertificates: Bool, topic: String?) throws -> EmbeddedMock {
        if clientCertificates {
            throw RunFailure.usage("--endpoint mock checks provider tokens: use --key-file/--key-id/--team-id, or no credentials at all (a fresh key is made)")
        }
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
        configuration.address = .loopback(port: 0)
        configuration.identity = .ephemeral(hosts: ["127.0.0.1"])
        let caFile = FileManager.default.temporaryDirectory
            .appendingPathComponent("apns-bulk-mock-ca-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).pem").path
        configuration.caOutPath = caFile
        if let signingKey, let keyID, let teamID {
            do {
                configuration.authentication = .token(
                    try TokenVerifier(signingKey: signingKey, keyID: ProviderToken.KeyID(keyID),
                                      teamID: ProviderToken.TeamID(teamID)))
            } catch {
                throw RunFailure.usage("--endpoint mock: \(error)")
            }
        }
        // Without --topic in the mock's settings it allows the run's topic, or any topic at all.
        if configuration.topics.isEmpty, let topic { configuration.topics = [topic] }
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
}
