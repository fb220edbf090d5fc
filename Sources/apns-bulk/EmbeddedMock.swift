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
    /// job file's [mock] table fills).
    static func start(options: [String], signingKey: SigningKey?, keyID: String?, teamID: String?,
                      clientIdentity: TLSIdentity?, topic: String?) throws -> EmbeddedMock {
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
        // The mock's own verify-key-file or client-ca wins: the run's credentials may be refused.
        let mockChecksItsOwn = parsed.verifyKeyFile != nil || parsed.clientCA != nil
        if !mockChecksItsOwn, let clientIdentity {
            configuration.authentication = .certificate(.issuerOf(clientIdentity))
            // A push certificate names its app in the subject's UID: its topic, as for APNs.
            if configuration.topics.isEmpty, let bundle = Self.userID(in: clientIdentity.subject) {
                configuration.topics = [bundle]
            }
        } else if !mockChecksItsOwn, let signingKey, let keyID, let teamID {
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

    /// The UID of a subject such as "/UID=com.example.app/CN=Apple Push Services: com.example.app".
    static func userID(in subject: String) -> String? {
        for part in subject.split(separator: "/") where part.hasPrefix("UID=") {
            let value = part.dropFirst(4)
            return value.isEmpty ? nil : String(value)
        }
        return nil
    }

    func stop() {
        _ = try? server.stop()
        unlink(caFile)
    }
}
