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
        var route = MockBroadcastRoute(path: path)
        // The kind names what was asked for, even of a listener that does not serve it.
        var answer = MockBroadcastAnswer(kind: Self.kind(route, method: method))
        if !role.serves(route) { route = .badPath }
        var headers = MockRequestHeaders()
        let unique = headers.collect(fields)
        if unique {
            answer.requestID = headers.requestID.map { fields.value(at: $0) }
            answer.channelID = headers.channelID.map { fields.value(at: $0) }
        }
        answer.bundleID = route.bundleID ?? ""
        connection.requestKey = nil
        if let reason = check(route, method: method, unique: unique, headers: headers, fields: fields,
                              body: (body, bodyLength), connection: &connection, now: now, into: &answer) {
            answer.refuse(reason)
        } else {
            switch answer.kind {
            case .broadcast: applyChannelState(headers.expiration.map { fields.value(at: $0) }, to: &answer)
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
        if BroadcastRules.hasPushTypeSuffix(bundleID) { return .topicDisallowed }
        if let topic = headers.topic, BroadcastRules.hasPushTypeSuffix(fields.value(at: topic)) { return .topicDisallowed }
        let app = String(bundleID)
        if !rules.serves(bundleID: app, key: connection.requestKey) { return .topicMismatch }
        if disabledApps.contains(app) { return .featureNotEnabled }
        guard answer.kind == .broadcast else { return BroadcastRules.checkRequestID(answer.requestID) }
        let text = { (index: Int?) in index.map { fields.value(at: $0) } }
        if let reason = BroadcastRules.checkChannelID(answer.channelID) { return reason }
        if let reason = BroadcastRules.checkPushType(text(headers.pushType)) { return reason }
        if let reason = BroadcastRules.checkPriority(text(headers.priority)) { return reason }
        if let reason = BroadcastRules.checkExpiration(text(headers.expiration)) { return reason }
        if let reason = BroadcastRules.checkRequestID(answer.requestID) { return reason }
        return body.length > BroadcastRules.payloadBytes ? .payloadTooLarge : BroadcastRules.checkPayload(body.bytes)
    }

    /// A broadcast that passed the header checks: its body, its channel (ChannelNotRegistered unless
    /// `admitAnyChannel`; BadExpirationDate for a nonzero expiration on a No-Message-Stored channel),
    /// then the random faults by the channel's attempt.
    private func applyChannelState(_ expiration: String?, to answer: inout MockBroadcastAnswer) {
        guard let channelID = answer.channelID else { return answer.refuse(.missingChannelId) }
        let policy = channels.policy(of: channelID, bundleID: answer.bundleID)
        if policy == nil, !admitAnyChannel { return answer.refuse(.channelNotRegistered) }
        let seconds = expiration.flatMap { HeaderRules.expirationSeconds($0) } ?? 0
        if let policy, !policy.accepts(expiration: seconds) { return answer.refuse(.badExpirationDate) }
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
        answer.channelID = id
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
