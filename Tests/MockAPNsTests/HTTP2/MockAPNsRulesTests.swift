import APNs
import Foundation
import Testing
import Transport
@testable import MockAPNs

/// A signing key, its verifier and tokens, made at test time.
struct TokenFixture {
    let key: SigningKey
    let keyID = try! ProviderToken.KeyID("ABC1234567")
    let teamID = try! ProviderToken.TeamID("TEAM123456")

    init() throws { key = try SigningKey.generate() }

    func verifier() throws -> TokenVerifier { try TokenVerifier(signingKey: key, keyID: keyID, teamID: teamID) }

    func token(issuedAt: Int64) throws -> String {
        try ProviderToken(signingKey: key, keyID: keyID, teamID: teamID, issuedAt: issuedAt).jwt
    }
}

let goodToken = String(repeating: "ab", count: 32)
let now = Int64(Date().timeIntervalSince1970)

/// One request as the rules see it; `headers` replace the defaults of the same name, nil removes one.
func request(method: String = "POST", path: String = "/3/device/" + goodToken, jwt: String?,
             headers: [String: String?] = [:], extra: [H2Field] = [],
             body: [UInt8] = Array(#"{"aps":{"alert":"hi"}}"#.utf8), bodyLength: Int? = nil)
    -> (method: String, path: String, fields: [H2Field], body: [UInt8], bodyLength: Int) {
    var values: [String: String?] = ["apns-topic": "com.example.app", "apns-push-type": "alert"]
    if let jwt { values["authorization"] = "bearer " + jwt }
    for (name, value) in headers { values[name] = value }
    var fields = [H2Field(name: ":method", value: method), H2Field(name: ":path", value: path)]
    for (name, value) in values.sorted(by: { $0.key < $1.key }) {
        if let value { fields.append(H2Field(name: name, value: value)) }
    }
    return (method, path, fields + extra, body, bodyLength ?? body.count)
}

extension MockAPNsRules {
    func answer(_ r: (method: String, path: String, fields: [H2Field], body: [UInt8], bodyLength: Int),
                connection: inout MockConnectionAuth, at time: Int64 = now) -> MockAnswer {
        answer(method: r.method, path: r.path, fields: r.fields, body: r.body, bodyLength: r.bodyLength,
               connection: &connection, now: time)
    }

    func answer(_ r: (method: String, path: String, fields: [H2Field], body: [UInt8], bodyLength: Int)) -> MockAnswer {
        var connection = MockConnectionAuth()
        return answer(r, connection: &connection)
    }
}

@Suite struct MockAPNsRulesTests {
    let tokens: TokenFixture
    let rules: MockAPNsRules
    let jwt: String

    init() throws {
        tokens = try TokenFixture()
        var configuration = MockAPNsConfiguration()
        configuration.authentication = .token(try tokens.verifier())
        configuration.topics = ["com.example.app"]
        rules = MockAPNsRules(configuration: configuration)
        jwt = try tokens.token(issuedAt: now)
    }

    @Test func everyCheckOfTheOrderAnswersItsReason() throws {
        let other = try TokenFixture()
        let cases: [(String, (method: String, path: String, fields: [H2Field], body: [UInt8], bodyLength: Int), Int, String?)] = [
            ("valid", request(jwt: jwt), 200, nil),
            ("GET", request(method: "GET", jwt: jwt), 405, "MethodNotAllowed"),
            ("bad path", request(path: "/3/devices/" + goodToken, jwt: jwt), 404, "BadPath"),
            ("no token", request(path: "/3/device/", jwt: jwt), 400, "MissingDeviceToken"),
            ("bad token", request(path: "/3/device/xyz", jwt: jwt), 400, "BadDeviceToken"),
            ("odd token", request(path: "/3/device/abc", jwt: jwt), 400, "BadDeviceToken"),
            ("repeated topic", request(jwt: jwt, extra: [H2Field(name: "apns-topic", value: "com.example.app")]), 400, "DuplicateHeaders"),
            ("no authorization", request(jwt: nil), 403, "MissingProviderToken"),
            ("not bearer", request(jwt: nil, headers: ["authorization": "basic abc"]), 403, "MissingProviderToken"),
            ("garbage token", request(jwt: "not.a.jwt"), 403, "InvalidProviderToken"),
            ("other key", request(jwt: try other.token(issuedAt: now)), 403, "InvalidProviderToken"),
            ("expired token", request(jwt: try tokens.token(issuedAt: now - 3601)), 403, "ExpiredProviderToken"),
            ("no topic", request(jwt: jwt, headers: ["apns-topic": nil]), 400, "MissingTopic"),
            ("other app", request(jwt: jwt, headers: ["apns-topic": "com.other.app"]), 400, "TopicDisallowed"),
            ("voip topic as alert", request(jwt: jwt, headers: ["apns-topic": "com.example.app.voip"]), 400, "BadTopic"),
            ("bare topic as voip", request(jwt: jwt, headers: ["apns-push-type": "voip"]), 400, "BadTopic"),
            ("voip topic as voip", request(jwt: jwt, headers: ["apns-topic": "com.example.app.voip", "apns-push-type": "voip"]), 200, nil),
            ("push type", request(jwt: jwt, headers: ["apns-push-type": "shout"]), 400, "InvalidPushType"),
            ("priority", request(jwt: jwt, headers: ["apns-priority": "7"]), 400, "BadPriority"),
            ("background at 10", request(jwt: jwt, headers: ["apns-push-type": "background"]), 400, "BadPriority"),
            ("expiration", request(jwt: jwt, headers: ["apns-expiration": "-1"]), 400, "BadExpirationDate"),
            ("apns-id", request(jwt: jwt, headers: ["apns-id": "NOT-A-UUID"]), 400, "BadMessageId"),
            ("collapse id", request(jwt: jwt, headers: ["apns-collapse-id": String(repeating: "c", count: 65)]), 400, "BadCollapseId"),
            ("empty body", request(jwt: jwt, body: []), 400, "PayloadEmpty"),
            ("4097 bytes", request(jwt: jwt, body: Self.payload(size: 4097)), 413, "PayloadTooLarge"),
            ("voip 5120 bytes", request(jwt: jwt, headers: ["apns-topic": "com.example.app.voip", "apns-push-type": "voip"],
                                        body: Self.payload(size: 5120)), 200, nil),
            ("voip 5121 bytes", request(jwt: jwt, headers: ["apns-topic": "com.example.app.voip", "apns-push-type": "voip"],
                                        body: Self.payload(size: 5121)), 413, "PayloadTooLarge"),
            ("cut body", request(jwt: jwt, body: Array(#"{"aps":"#.utf8)), 400, "InvalidPayload"),
            ("array body", request(jwt: jwt, body: Array("[1]".utf8)), 400, "InvalidPayload"),
        ]
        for (name, r, status, reason) in cases {
            let answer = rules.answer(r)
            #expect(answer.status == status, "\(name)")
            #expect(answer.reason == reason, "\(name)")
        }
    }

    @Test func theFirstFailingCheckAnswers() {
        // Wrong method, bad token, no authorization, bad priority, empty body: the method wins.
        let all = request(method: "PUT", path: "/3/device/zz", jwt: nil, headers: ["apns-priority": "9"], body: [])
        #expect(rules.answer(all).reason == "MethodNotAllowed")
        let noMethod = request(path: "/3/device/zz", jwt: nil, headers: ["apns-priority": "9"], body: [])
        #expect(rules.answer(noMethod).reason == "BadDeviceToken")
        let authNext = request(jwt: nil, headers: ["apns-priority": "9", "apns-topic": nil], body: [])
        #expect(rules.answer(authNext).reason == "MissingProviderToken")
        let topicNext = request(jwt: jwt, headers: ["apns-priority": "9", "apns-topic": "com.other.app"], body: [])
        #expect(rules.answer(topicNext).reason == "TopicDisallowed")
        let priorityNext = request(jwt: jwt, headers: ["apns-priority": "9"], body: [])
        #expect(rules.answer(priorityNext).reason == "BadPriority")
    }

    @Test func aTooSoonTokenChangeOnOneConnectionIsRefused() throws {
        var connection = MockConnectionAuth()
        let first = try tokens.token(issuedAt: now - 600)
        #expect(rules.answer(request(jwt: first), connection: &connection).status == 200)
        let tooSoon = try tokens.token(issuedAt: now - 600 + 19 * 60)
        let refused = rules.answer(request(jwt: tooSoon), connection: &connection)
        #expect(refused.status == 429)
        #expect(refused.reason == "TooManyProviderTokenUpdates")
        // The previous token still works; one 20 minutes younger is accepted.
        #expect(rules.answer(request(jwt: first), connection: &connection).status == 200)
        let later = try tokens.token(issuedAt: now - 600 + 20 * 60)
        #expect(rules.answer(request(jwt: later), connection: &connection).status == 200)
        // Another connection may start with any valid token.
        var fresh = MockConnectionAuth()
        #expect(rules.answer(request(jwt: tooSoon), connection: &fresh).status == 200)
    }

    @Test func aTokenExpiresAnHourAfterItsIssueOnAConnectionThatUsesIt() throws {
        var connection = MockConnectionAuth()
        let token = try tokens.token(issuedAt: now)
        #expect(rules.answer(request(jwt: token), connection: &connection, at: now + 3600).status == 200)
        let late = rules.answer(request(jwt: token), connection: &connection, at: now + 3601)
        #expect(late.status == 403)
        #expect(late.reason == "ExpiredProviderToken")
    }

    @Test func onlyRequestsPastTheAuthorizationCheckOpenTheConnection() {
        #expect(!rules.answer(request(jwt: nil)).passedAuthorization)
        #expect(!rules.answer(request(path: "/3/device/zz", jwt: jwt)).passedAuthorization)
        #expect(rules.answer(request(jwt: jwt, headers: ["apns-priority": "9"])).passedAuthorization)
        #expect(rules.answer(request(jwt: jwt)).passedAuthorization)
    }

    static func payload(size: Int) -> [UInt8] {
        let prefix = Array(#"{"aps":{"alert":""#.utf8), suffix = Array(#""}}"#.utf8)
        return prefix + Array(repeating: UInt8(ascii: "x"), count: size - prefix.count - suffix.count) + suffix
    }
}
