import APNs
import Foundation
import Transport

/// What one listener of the mock serves: everything (the default, one listener), or, with
/// `--management-listen`, device pushes and broadcasts on one and channel management on the other,
/// as Apple's hosts are split. A path the listener does not serve is 404 BadPath.
enum MockListenerRole {
    case all
    case pushes
    case management

    func serves(_ route: MockBroadcastRoute) -> Bool {
        switch (self, route) {
        case (.all, _), (_, .badPath), (.pushes, .broadcast), (.management, .channels), (.management, .allChannels): true
        default: false
        }
    }

    /// Whether a request for `path` goes to the broadcast side; the rest to the device-push checks.
    func routesToBroadcastSide(_ path: String) -> Bool {
        self == .management || MockBroadcastRoute.isBroadcastOrChannelPath(path)
    }
}

/// APNs' broadcast and channel-management rules applied to one request, in docs/apns.md's order
/// (first failure answers), then the channel's state and the injected faults. The authorization,
/// the apps served and the fault draws are the device pushes' (`MockAPNsRules`). Reactor thread only.
final class MockBroadcastRules {
    private let rules: MockAPNsRules
    private let channels: MockChannelStore
    private let role: MockListenerRole
    private let admitAnyChannel: Bool
    private let disabledApps: Set<String>
    private let countsAttempts: Bool
    /// Random faults are configured (`--fail`, `--too-many-requests`, `--refuse-streams`): without
    /// them the draw answers nothing, and costs a hash of the channel id per broadcast.
    private let drawsFaults: Bool
    /// `--respond-file` lines naming channel ids.
    private let scripted: [String: MockAPNsConfiguration.ScriptedAnswer]
    /// Attempts per channel id, for the fault draws (counted only when a fault needs them).
    private var attempts: [String: UInt32] = [:]

    init(rules: MockAPNsRules, channels: MockChannelStore, role: MockListenerRole) {
        self.rules = rules
        self.channels = channels
        self.role = role
        let configuration = rules.configuration
        admitAnyChannel = configuration.admitAnyChannel
        disabledApps = configuration.broadcastDisabledApps
        countsAttempts = configuration.needsAttemptNumbers
        drawsFaults = !configuration.failures.isEmpty || configuration.tooManyRequestsRate > 0
            || configuration.refuseStreamsRate > 0
        scripted = configuration.scripted
    }

    /// Decides the answer to a complete request; `random` makes new channel ids.
    func answer(method: String, path: String, headers fields: H2RequestHeaders, body: [UInt8], bodyLength: Int,
                connection: inout MockConnectionAuth, now: Int64, random: inout MockRandom) -> MockBroadcastAnswer {
        var route = connection.acceptedBroadcast.route(of: path)
        // The kind names what was asked for, even of a listener that does not serve it.
        let kind = Self.kind(route, method: method)
        var answer = MockBroadcastAnswer(kind: kind)
        if !role.serves(route) { route = .badPath }
        var headers = MockRequestHeaders()
        let unique = headers.collect(fields)
        if unique {
            answer.requestID = headers.requestID.map { fields.value(at: $0) }
            answer.fields = fields
            answer.channelField = headers.channelID
        }
        answer.bundleID = route.bundleID ?? ""
        connection.requestKey = nil
        if let reason = check(route, method: method, unique: unique, headers: headers, fields: fields,
                              body: (body, bodyLength), connection: &connection, now: now, into: &answer) {
            answer.refuse(reason)
        } else {
            switch kind {
            case .broadcast:
                applyChannelState(expiration: headers.expiration, app: connection.acceptedBroadcast.app?.text,
                                  to: &answer)
            case .create: create(body, into: &answer, random: &random)
            case .read, .delete, .list: manage(body, into: &answer)
            case .other: break
            }
        }
        answer.key = connection.requestKey
        return answer
    }

    private static func kind(_ route: MockBroadcastRoute, method: String) -> MockBroadcastAnswer.Kind {
        switch (route, method) {
        case (.broadcast, _): .broadcast
        case (.channels, "POST"): .create
        case (.channels, "GET"): .read
        case (.channels, "DELETE"): .delete
        case (.allChannels, _): .list
        default: .other
        }
    }

    /// The checks every request of the broadcast side takes, then a broadcast's headers and body.
    private func check(_ route: MockBroadcastRoute, method: String, unique: Bool, headers: MockRequestHeaders,
                       fields: H2RequestHeaders, body: (bytes: [UInt8], length: Int),
                       connection: inout MockConnectionAuth, now: Int64,
                       into answer: inout MockBroadcastAnswer) -> Reason? {
        guard let bundleID = route.bundleID else { return .badPath }
        if !route.allows(method: method) { return .methodNotAllowed }
        if !unique { return .duplicateHeaders }
        if let reason = rules.authorize(headers.authorization, in: fields, connection: &connection, now: now) {
            return reason
        }
        answer.passedAuthorization = true
        if let reason = checkApp(bundleID, topic: headers.topic, in: fields, connection: &connection) { return reason }
        guard answer.kind == .broadcast else { return BroadcastRules.checkRequestID(answer.requestID) }
        if let reason = Self.checkChannelID(headers.channelID, in: fields) { return reason }
        if let reason = checkHeaders(headers, in: fields, connection: &connection) { return reason }
        if let reason = BroadcastRules.checkRequestID(answer.requestID) { return reason }
        return body.length > BroadcastRules.payloadBytes ? .payloadTooLarge : BroadcastRules.checkPayload(body.bytes)
    }

    /// The path's bundle id (no push type's suffix, served by the credentials, broadcasts enabled)
    /// and the `apns-topic`'s suffix, in that order; the connection's accepted app skips its own
    /// checks (a `String` of the bundle id and two set look-ups per request, without it).
    private func checkApp(_ bundleID: Substring, topic: Int?, in fields: H2RequestHeaders,
                          connection: inout MockConnectionAuth) -> Reason? {
        let key = connection.requestKey
        let accepted = connection.acceptedBroadcast.accepts(bundleID, key: key)
        if !accepted, BroadcastRules.hasPushTypeSuffix(bundleID) { return .topicDisallowed }
        if let topic, fields.withValueBytes(at: topic, BroadcastRules.hasPushTypeSuffix(bytes:)) {
            return .topicDisallowed
        }
        if accepted { return nil }
        let app = String(bundleID)
        if !rules.serves(bundleID: app, key: key) { return .topicMismatch }
        if disabledApps.contains(app) { return .featureNotEnabled }
        connection.acceptedBroadcast.app = .init(bytes: Array(bundleID.utf8), text: app, key: key)
        return nil
    }

    /// `BroadcastRules.checkChannelID` over the field's bytes in place.
    private static func checkChannelID(_ index: Int?, in fields: H2RequestHeaders) -> Reason? {
        guard let index else { return .missingChannelId }
        return fields.withValueBytes(at: index) { bytes in
            if bytes.isEmpty { return .missingChannelId }
            return BroadcastRules.isWellFormedChannelID(bytes: bytes) ? nil : .badChannelId
        }
    }

    /// A broadcast's push type, priority and expiration, in that order; values the connection's
    /// last broadcast carried and passed are not checked again (no `String` made).
    private func checkHeaders(_ headers: MockRequestHeaders, in fields: H2RequestHeaders,
                              connection: inout MockConnectionAuth) -> Reason? {
        if connection.acceptedBroadcast.acceptsHeaders(pushType: headers.pushType, priority: headers.priority,
                                                       expiration: headers.expiration, in: fields) {
            return nil
        }
        let text = { (index: Int?) in index.map { fields.value(at: $0) } }
        if let reason = BroadcastRules.checkPushType(text(headers.pushType)) { return reason }
        if let reason = BroadcastRules.checkPriority(text(headers.priority)) { return reason }
        if let reason = BroadcastRules.checkExpiration(text(headers.expiration)) { return reason }
        let bytes = { (index: Int?) in index.map { fields.valueBytes(at: $0) } }
        connection.acceptedBroadcast.headers = .init(pushType: bytes(headers.pushType), priority: bytes(headers.priority),
                                                     expiration: bytes(headers.expiration))
        return nil
    }

    /// A broadcast that passed the header checks: its body, its channel (ChannelNotRegistered unless
    /// `admitAnyChannel`; BadExpirationDate for a nonzero expiration on a No-Message-Stored channel),
    /// then the random faults by the channel's attempt. `expiration` is the field's index; `app`
    /// the accepted bundle id's text. The channel id's `String` is made only when something
    /// needs it (a channel to look up, an attempt to count, a script, a fault).
    private func applyChannelState(expiration: Int?, app: String?, to answer: inout MockBroadcastAnswer) {
        guard answer.channelField != nil else { return answer.refuse(.missingChannelId) }
        let hasChannels = !channels.isEmpty
        let drawsPerChannel = countsAttempts || !scripted.isEmpty || drawsFaults
        let channelID = hasChannels || drawsPerChannel ? answer.channelID : nil
        var policy: ChannelStoragePolicy?
        if hasChannels, let channelID { policy = channels.policy(of: channelID, bundleID: app ?? String(answer.bundleID)) }
        if policy == nil, !admitAnyChannel { return answer.refuse(.channelNotRegistered) }
        if let policy {
            let seconds = expiration.flatMap { HeaderRules.expirationSeconds(answer.fields.value(at: $0)) } ?? 0
            if !policy.accepts(expiration: seconds) { return answer.refuse(.badExpirationDate) }
        }
        guard drawsPerChannel, let channelID else { return }
        var attempt: UInt32 = 1
        if countsAttempts {
            attempt = (attempts[channelID] ?? 0) &+ 1
            attempts[channelID] = attempt
        }
        if !scripted.isEmpty, let scripted = scripted[channelID], scripted.times.map({ Int(attempt) <= $0 }) ?? true {
            answer.status = scripted.status
            answer.reason = nil
            if scripted.status != 200 { answer.scriptedReason = scripted.reason }
            return
        }
        if drawsFaults, let fault = rules.randomFault(key: channelID, attempt: attempt) {
            answer.status = fault.status
            answer.reason = fault.reason
        }
    }

    /// Create: the body names a policy and the push type; the app's limit holds; a new random id.
    private func create(_ body: [UInt8], into answer: inout MockBroadcastAnswer, random: inout MockRandom) {
        let policy: ChannelStoragePolicy
        switch Self.createBody(body) {
        case .success(let parsed): policy = parsed
        case .failure(let refusal): return answer.refuse(refusal.reason)
        }
        let id = Self.newChannelID(using: &random)
        do {
            try channels.create(id, policy: policy, bundleID: String(answer.bundleID))
        } catch {
            return answer.refuse(.cannotCreateChannelConfig)
        }
        answer.status = 201
        answer.createdChannelID = id
    }

    /// Read, delete and list.
    private func manage(_ body: [UInt8], into answer: inout MockBroadcastAnswer) {
        let bundleID = String(answer.bundleID)
        if answer.kind == .list {
            let ids = channels.channels(of: bundleID).map { "\"\($0)\"" }.joined(separator: ",")
            answer.body = Array("{\"channels\":[\(ids)]}".utf8)
            return
        }
        if let reason = BroadcastRules.checkChannelID(answer.channelID) { return answer.refuse(reason) }
        let id = answer.channelID ?? ""
        if answer.kind == .delete {
            if channels.delete(id, bundleID: bundleID) { answer.status = 204 } else { answer.refuse(.channelNotRegistered) }
            return
        }
        guard let policy = channels.policy(of: id, bundleID: bundleID) else { return answer.refuse(.channelNotRegistered) }
        answer.body = Array(policy.channelJSON.utf8)
    }

    struct BodyRefusal: Error { let reason: Reason }

    private struct CreateBody: Decodable {
        var policy: Int?
        var pushType: String?

        enum CodingKeys: String, CodingKey {
            case policy = "message-storage-policy"
            case pushType = "push-type"
        }
    }

    /// `{"message-storage-policy": 0|1, "push-type": "LiveActivity"}`: PayloadEmpty, BadRequestPayload
    /// (not a JSON object, or a key missing), BadRequestParams (a value of the wrong type or out of range).
    static func createBody(_ body: [UInt8]) -> Result<ChannelStoragePolicy, BodyRefusal> {
        if body.isEmpty { return .failure(.init(reason: .payloadEmpty)) }
        guard JSONValidator.validate(body) == nil else { return .failure(.init(reason: .badRequestPayload)) }
        let parsed: CreateBody
        do {
            parsed = try JSONDecoder().decode(CreateBody.self, from: Data(body))
        } catch DecodingError.typeMismatch {
            return .failure(.init(reason: .badRequestParams))
        } catch {
            return .failure(.init(reason: .badRequestPayload))
        }
        guard let value = parsed.policy, let pushType = parsed.pushType else {
            return .failure(.init(reason: .badRequestPayload))
        }
        guard let policy = ChannelStoragePolicy(rawValue: value), pushType == BroadcastRules.channelPushType else {
            return .failure(.init(reason: .badRequestParams))
        }
        return .success(policy)
    }

    /// A random channel id: 16 random bytes in base64 (Apple's ids are base64, of no fixed length).
    static func newChannelID(using random: inout MockRandom) -> String {
        var bytes: [UInt8] = []
        for _ in 0..<2 {
            var word = random.next()
            for _ in 0..<8 {
                bytes.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return Data(bytes).base64EncodedString()
    }
}
