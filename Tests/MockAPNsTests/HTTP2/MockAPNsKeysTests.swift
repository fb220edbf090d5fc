import APNs
import Foundation
import Testing
import TestSupport
import Transport
@testable import MockAPNs

/// The mock with several signing keys (issue 18), over real TLS with real signed tokens: a key
/// used in the other environment, a topic outside a key's list, and a token of a key unrelated to
/// the connection's first push are refused as APNs refuses them; `--record-out` names each
/// request's key.
@Suite(.serialized) struct MockAPNsKeysTests {
    /// A key made at test time, with its id and one fresh token.
    struct Key {
        let signing: SigningKey
        let id: ProviderToken.KeyID
        let jwt: String
        static let team = try! ProviderToken.TeamID("TEAM123456")

        init(_ id: String) throws {
            signing = try SigningKey.generate()
            self.id = try ProviderToken.KeyID(id)
            jwt = try ProviderToken(signingKey: signing, keyID: self.id, teamID: Self.team, issuedAt: now).jwt
        }

        func mock(environment: APNsEnvironment? = nil, topics: Set<String>? = nil, related: String? = nil) throws -> MockTokenKey {
            MockTokenKey(verifier: try TokenVerifier(signingKey: signing, keyID: id, teamID: Self.team),
                         environment: environment, topics: topics, relatedKeyID: related)
        }
    }

    static func push(_ jwt: String, topic: String = "com.example.app", pushType: String = "alert",
                     token: Int = 0) -> MockTestClient.Request {
        .init(path: "/3/device/" + MockAPNsFaultTests.token(token),
              headers: [H2Header("apns-topic", topic), H2Header("apns-push-type", pushType),
                        H2Header("authorization", "bearer " + jwt)],
              body: Array(#"{"aps":{"alert":"hi"}}"#.utf8))
    }

    static func start(_ keys: [MockTokenKey], environment: MockAPNsEnvironment = .production,
                      record: String? = nil) throws -> MockAPNsServer {
        var configuration = MockAPNsConfiguration()
        configuration.authentication = .keys(keys)
        configuration.environment = environment
        configuration.identity = .ephemeral(hosts: ["127.0.0.1"])
        configuration.recordOutPath = record
        return try MockAPNsServer.start(configuration)
    }

    /// (status, reason) of each response, in the order the requests were given (one stream at a
    /// time until the first authorized answer, so in order on the wire too).
    static func answers(_ server: MockAPNsServer, _ requests: [MockTestClient.Request]) throws -> [String] {
        let outcome = try MockTestClient.run(port: server.port, trust: try #require(server.certificateAuthority),
                                             requests: requests)
        return outcome.responses.sorted { $0.tag < $1.tag }.map { response in
            let reason = (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])?["reason"]
            return "\(response.status) \(reason as? String ?? "-")"
        }
    }

    @Test func aKeyRestrictedToTheOtherEnvironmentIsAnsweredBadEnvironmentKeyIdInToken() throws {
        let sandboxKey = try Key("SANDBOX001"), productionKey = try Key("PRODKEY001"), anyKey = try Key("ANYKEY0001")
        let keys = [try sandboxKey.mock(environment: .sandbox), try productionKey.mock(environment: .production),
                    try anyKey.mock()]
        let production = try Self.start(keys)
        defer { _ = try? production.stop() }
        #expect(try Self.answers(production, [Self.push(sandboxKey.jwt)]) == ["403 BadEnvironmentKeyIdInToken"])
        #expect(try Self.answers(production, [Self.push(productionKey.jwt)]) == ["200 -"])
        #expect(try Self.answers(production, [Self.push(anyKey.jwt)]) == ["200 -"])
        let sandbox = try Self.start(keys, environment: .sandbox)
        defer { _ = try? sandbox.stop() }
        #expect(try Self.answers(sandbox, [Self.push(sandboxKey.jwt)]) == ["200 -"])
        #expect(try Self.answers(sandbox, [Self.push(productionKey.jwt)]) == ["403 BadEnvironmentKeyIdInToken"])
        #expect(try Self.answers(sandbox, [Self.push(anyKey.jwt)]) == ["200 -"])
    }

    @Test func aTopicOutsideTheKeysTopicsIsAnsweredTopicDisallowed() throws {
        let topicKey = try Key("TOPICKEY01"), teamKey = try Key("TEAMKEY001")
        let server = try Self.start([try topicKey.mock(topics: ["com.example.app"]), try teamKey.mock()])
        defer { _ = try? server.stop() }
        #expect(try Self.answers(server, [
            Self.push(topicKey.jwt, topic: "com.example.app"),
            // The bundle id is the topic without its push type's suffix.
            Self.push(topicKey.jwt, topic: "com.example.app.voip", pushType: "voip", token: 1),
            Self.push(topicKey.jwt, topic: "com.example.other", token: 2),
        ]) == ["200 -", "200 -", "400 TopicDisallowed"])
        // A team-scoped key serves any topic (the server names none of its own here).
        #expect(try Self.answers(server, [Self.push(teamKey.jwt, topic: "com.example.other")]) == ["200 -"])
    }

    @Test func aTokenOfAKeyUnrelatedToTheConnectionsFirstIsAnsweredUnrelatedKeyIdInToken() throws {
        let first = try Key("FIRSTKEY01"), unrelated = try Key("OTHERKEY01"), related = try Key("RELATED001")
        // The related key names the first; either direction relates them.
        let server = try Self.start([try first.mock(), try unrelated.mock(), try related.mock(related: "FIRSTKEY01")])
        defer { _ = try? server.stop() }
        #expect(try Self.answers(server, [
            Self.push(first.jwt), Self.push(unrelated.jwt, token: 1), Self.push(related.jwt, token: 2),
            Self.push(first.jwt, token: 3),
        ]) == ["200 -", "403 UnrelatedKeyIdInToken", "200 -", "200 -"])
        // Per connection: on a new one, the other key's first push fixes the key.
        #expect(try Self.answers(server, [Self.push(unrelated.jwt), Self.push(first.jwt, token: 1)])
            == ["200 -", "403 UnrelatedKeyIdInToken"])
        // A refused first push fixes nothing.
        #expect(try Self.answers(server, [Self.push("not.a.token"), Self.push(unrelated.jwt, token: 1)])
            == ["403 InvalidProviderToken", "200 -"])
    }

    @Test func theRecordNamesTheKeyOfEachRequest() throws {
        let directory = try TemporaryDirectory()
        let file = directory.path("mock-keys.jsonl.zst")
        let one = try Key("KEYONE0001"), two = try Key("KEYTWO0001")
        let server = try Self.start([try one.mock(), try two.mock(environment: .sandbox)], record: file)
        #expect(try Self.answers(server, [Self.push(one.jwt), Self.push("not.a.token", token: 1)]) == ["200 -", "403 InvalidProviderToken"])
        #expect(try Self.answers(server, [Self.push(two.jwt, token: 2)]) == ["403 BadEnvironmentKeyIdInToken"])
        try server.stop()
        let text = try ZstdCLI.decode(file).stdout
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines.contains { $0.contains(#""status":200,"reason":null,"key_id":"KEYONE0001"}"#) })
        #expect(lines.contains { $0.contains(#""reason":"InvalidProviderToken"}"#) }, "no key verified: no key_id")
        #expect(lines.contains { $0.contains(#""reason":"BadEnvironmentKeyIdInToken","key_id":"KEYTWO0001"}"#) })
    }
}
