import APNs
import Transport
@testable import MockAPNs

/// Broadcast and channel requests as `MockBroadcastRules` sees them, for the rule tests, and as
/// `MockTestClient` sends them, for the tests over TLS.
enum BroadcastRequests {
    static let app = "com.example.app"
    /// A well-formed channel id no create made (base64 of "unknown channel!").
    static let unknownChannel = "dW5rbm93biBjaGFubmVsIQ=="

    /// A valid broadcast's headers; `overrides` replace those of the same name, nil removes one.
    static func broadcastHeaders(channel: String, jwt: String = "x",
                                 _ overrides: [String: String?] = [:]) -> [(String, String)] {
        var values: [String: String?] = ["authorization": "bearer " + jwt, "apns-channel-id": channel,
                                         "apns-push-type": "liveactivity", "apns-expiration": "0", "apns-priority": "10"]
        for (name, value) in overrides { values[name] = value }
        return values.sorted { $0.key < $1.key }.compactMap { name, value in value.map { (name, $0) } }
    }

    static let update = Array(#"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":"1-0"}}}"#.utf8)

    static func createBody(policy: Int) -> [UInt8] {
        Array("{\"message-storage-policy\":\(policy),\"push-type\":\"LiveActivity\"}".utf8)
    }

    // Over TLS.

    static func broadcast(channel: String, jwt: String, app: String = app, _ overrides: [String: String?] = [:],
                          body: [UInt8] = update) -> MockTestClient.Request {
        .init(path: "/4/broadcasts/apps/\(app)",
              headers: broadcastHeaders(channel: channel, jwt: jwt, overrides).map { H2Header($0.0, $0.1) }, body: body)
    }

    static func create(policy: Int = 1, jwt: String, app: String = app) -> MockTestClient.Request {
        .init(path: "/1/apps/\(app)/channels", headers: [H2Header("authorization", "bearer " + jwt)],
              body: createBody(policy: policy))
    }

    static func read(_ channel: String, jwt: String, method: String = "GET") -> MockTestClient.Request {
        .init(path: "/1/apps/\(app)/channels",
              headers: [H2Header("authorization", "bearer " + jwt), H2Header("apns-channel-id", channel)],
              body: [], method: method)
    }

    static func list(jwt: String) -> MockTestClient.Request {
        .init(path: "/1/apps/\(app)/all-channels", headers: [H2Header("authorization", "bearer " + jwt)], body: [],
              method: "GET")
    }
}

/// One `MockBroadcastRules` with its channels, answering requests one at a time on one connection.
final class BroadcastRulesHarness {
    let rules: MockBroadcastRules
    let channels: MockChannelStore
    var connection = MockConnectionAuth()
    private var random = MockRandom(seed: 1)

    init(role: MockListenerRole = .all, _ adjust: (inout MockAPNsConfiguration) -> Void = { _ in }) {
        var configuration = MockAPNsConfiguration()
        configuration.authentication = .tokenPresenceOnly
        adjust(&configuration)
        channels = MockChannelStore(limit: configuration.maxChannelsPerApp)
        rules = MockBroadcastRules(rules: MockAPNsRules(configuration: configuration), channels: channels, role: role)
    }

    func answer(method: String = "POST", path: String, headers: [(String, String)], body: [UInt8] = [],
                bodyLength: Int? = nil, at time: Int64 = now) -> MockBroadcastAnswer {
        var fields = [H2Field(name: ":method", value: method), H2Field(name: ":path", value: path)]
        fields += headers.map { H2Field(name: $0.0, value: $0.1) }
        return rules.answer(method: method, path: path, headers: H2RequestHeaders(fields), body: body,
                            bodyLength: bodyLength ?? body.count, connection: &connection, now: time, random: &random)
    }

    func broadcast(channel: String, app: String = BroadcastRequests.app, _ overrides: [String: String?] = [:],
                   body: [UInt8] = BroadcastRequests.update, bodyLength: Int? = nil) -> MockBroadcastAnswer {
        answer(path: "/4/broadcasts/apps/\(app)", headers: BroadcastRequests.broadcastHeaders(channel: channel, overrides),
               body: body, bodyLength: bodyLength)
    }

    func create(policy: Int = 1, app: String = BroadcastRequests.app) -> MockBroadcastAnswer {
        createRaw(BroadcastRequests.createBody(policy: policy), app: app)
    }

    func createRaw(_ body: [UInt8], app: String = BroadcastRequests.app) -> MockBroadcastAnswer {
        answer(path: "/1/apps/\(app)/channels", headers: [("authorization", "bearer x")], body: body)
    }

    func channelRequest(_ method: String, channel: String?, resource: String = "channels") -> MockBroadcastAnswer {
        var headers = [("authorization", "bearer x")]
        if let channel { headers.append(("apns-channel-id", channel)) }
        return answer(method: method, path: "/1/apps/\(BroadcastRequests.app)/\(resource)", headers: headers)
    }

    /// A channel made by a create, its id.
    func newChannel(policy: Int = 1) -> String {
        create(policy: policy).channelID ?? ""
    }
}
