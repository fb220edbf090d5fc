import APNs
import Glibc
import Transport

/// The answer to one request, before it is sent.
public struct MockAnswer: Sendable, Equatable {
    /// The HTTP status; 0 means the stream is refused (RST_STREAM REFUSED_STREAM) instead.
    public var status: Int
    /// The reason string of an error answer (APNs' name, or a scripted one).
    public var reason: String?
    /// The 410 timestamp, ms since 1970.
    public var timestamp: Int64?
    /// The device token's hex as it appeared in the path (empty when the path had none).
    public var deviceToken: Substring
    /// The request passed the authorization check (a connection's stream limit rises after the first).
    public var passedAuthorization: Bool
    /// The request's `apns-id` header, when it had exactly one (echoed in the answer).
    public var apnsID: String?

    /// The stream is refused (status 0) rather than answered.
    public var isRefusal: Bool { status == 0 }
}

/// APNs' rules applied to one request, in APNS.md's order (first failure answers), then the
/// per-token state and the injected faults. Owns the shared state of a server: the token cache
/// and the attempt numbers. Reactor thread only (one server, one thread).
public final class MockAPNsService {
    /// The server's configuration: the rules and faults applied.
    public let configuration: MockAPNsConfiguration
    private let authorizer: MockAuthorizer
    private var attempts: [String: UInt32] = [:]
    private let lookupByToken: Bool
    private let usesCertificates: Bool
    private let topics: Set<String>

    /// The rules of a server with `configuration`; verifies no token yet.
    public init(configuration: MockAPNsConfiguration) {
        self.configuration = configuration
        var cache: MockTokenCache?
        if case .token(let verifier) = configuration.authentication {
            cache = MockTokenCache(verifier: verifier, capacity: configuration.tokenCacheCapacity)
        }
        authorizer = MockAuthorizer(cache: cache)
        usesCertificates = configuration.usesCertificates
        topics = configuration.topics
        lookupByToken = configuration.needsAttemptNumbers || !configuration.unregistered.isEmpty
            || !configuration.scripted.isEmpty
    }

    /// Decides the answer to a complete request. `now` is seconds since 1970 (provider token age).
    public func answer(method: String, path: String, fields: [H2Field], body: [UInt8], bodyLength: Int,
                       connection: inout MockConnectionAuth, now: Int64) -> MockAnswer {
        answer(method: method, path: path, headers: H2RequestHeaders(fields), body: body, bodyLength: bodyLength,
               connection: &connection, now: now)
    }

    /// Decides the answer to a complete request, reading only the headers APNs defines.
    public func answer(method: String, path: String, headers: H2RequestHeaders, body: [UInt8], bodyLength: Int,
                       connection: inout MockConnectionAuth, now: Int64) -> MockAnswer {
        var result = MockAnswer(status: 200, reason: nil, timestamp: nil, deviceToken: "", passedAuthorization: false)
        if let token = Self.deviceTokenHex(inPath: path) { result.deviceToken = token }
        if let reason = check(method: method, path: path, fields: headers, body: body, bodyLength: bodyLength,
                              connection: &connection, now: now, into: &result) {
            result.status = reason.status
            result.reason = reason.name
            return result
        }
        applyTokenState(to: &result)
        return result
    }

    /// `HeaderRules.deviceTokenHex(inPath:)` with the prefix compared as bytes (its generic
    /// `starts(with:)` over the UTF-8 view cost about 700 instructions a request).
    static func deviceTokenHex(inPath path: String) -> Substring? {
        let matches = path.utf8.withContiguousStorageIfAvailable { bytes in
            guard let base = bytes.baseAddress, bytes.count >= devicePathPrefix.count else { return false }
            return memcmp(base, devicePathPrefix, devicePathPrefix.count) == 0
        } ?? path.utf8.starts(with: devicePathPrefix)
        guard matches else { return nil }
        return Substring(path.utf8.dropFirst(devicePathPrefix.count))
    }

    private static let devicePathPrefix = Array("/3/device/".utf8)

    /// The first check that fails, in APNS.md's order.
    private func check(method: String, path: String, fields: H2RequestHeaders, body: [UInt8], bodyLength: Int,
                       connection: inout MockConnectionAuth, now: Int64, into result: inout MockAnswer) -> Reason? {
        var headers = MockRequestHeaders()
        let unique = headers.collect(fields)
        result.apnsID = unique ? headers.apnsID.map { fields.value(at: $0) } : nil
        if method != "POST" { return .methodNotAllowed }
        if let reason = HeaderRules.checkPath(path) { return reason }
        if !unique { return .duplicateHeaders }
        if !usesCertificates {
            if let reason = authorizer.check(authorization: headers.authorization, in: fields,
                                             connection: &connection, now: now) {
                return reason
            }
        }
        result.passedAuthorization = true
        let pushType = headers.pushType.flatMap { Self.pushType(fields, at: $0) }
        let topicPushType = pushType ?? (headers.pushType == nil ? .alert : nil)
        if let reason = checkTopic(headers.topic, in: fields, pushType: topicPushType, connection: &connection) {
            return reason
        }
        let text = { (index: Int?) in index.map { fields.value(at: $0) } }
        // Parsed once above; only an unknown name needs the rule's answer.
        if pushType == nil, let reason = HeaderRules.checkPushType(text(headers.pushType)) { return reason }
        let type = pushType ?? .alert
        if let reason = HeaderRules.checkPriority(text(headers.priority), pushType: type) { return reason }
        if let reason = HeaderRules.checkExpiration(text(headers.expiration)) { return reason }
        if let reason = HeaderRules.checkAPNsID(result.apnsID) { return reason }
        if let reason = HeaderRules.checkCollapseID(text(headers.collapseID)) { return reason }
        if bodyLength > Limits.payloadBytes(for: type) { return .payloadTooLarge }
        return HeaderRules.checkPayload(body, pushType: type)
    }

    /// `PushType(headerValue:)` on bytes: the same exact names, no `String` per request.
    private static let pushTypeNames: [(name: [UInt8], type: PushType)] =
        PushType.allCases.map { (Array($0.headerValue.utf8), $0) }

    private static func pushType(_ fields: H2RequestHeaders, at index: Int) -> PushType? {
        for entry in pushTypeNames where fields.value(at: index, equals: entry.name) { return entry.type }
        return nil
    }

    /// The topic rule; a connection's last accepted (topic, push type) is accepted again without a
    /// `String` (the verdict depends on nothing else: the configuration does not change).
    private func checkTopic(_ index: Int?, in fields: H2RequestHeaders, pushType: PushType?,
                            connection: inout MockConnectionAuth) -> Reason? {
        if let index, let accepted = connection.acceptedTopic, accepted.pushType == pushType,
           fields.value(at: index, equals: accepted.topic) {
            return nil
        }
        let reason = checkTopic(index.map { fields.value(at: $0) }, pushType: pushType)
        if reason == nil, let index { connection.acceptedTopic = (fields.valueBytes(at: index), pushType) }
        return reason
    }

    private func checkTopic(_ topic: String?, pushType: PushType?) -> Reason? {
        if topics.isEmpty {
            return HeaderRules.checkTopic(topic, pushType: pushType, auth: usesCertificates ? .certificate : .token)
        }
        // With a certificate the topic may be omitted (the certificate names the app).
        if usesCertificates, topic == nil || topic?.isEmpty == true { return nil }
        return HeaderRules.checkTopic(topic, pushType: pushType, allowedBundleIDs: topics)
    }

    /// Per-token state and faults, for a request that passed every check: scripted answers,
    /// unregistered tokens, then the random faults (refusal, 500/503, 429).
    private func applyTokenState(to result: inout MockAnswer) {
        guard lookupByToken else { return }
        let key = result.deviceToken.lowercased()
        var attempt: UInt32 = 1
        if configuration.needsAttemptNumbers {
            attempt = (attempts[key] ?? 0) &+ 1
            attempts[key] = attempt
        }
        if let scripted = configuration.scripted[key], scripted.times.map({ Int(attempt) <= $0 }) ?? true {
            result.status = scripted.status
            result.reason = scripted.status == 200 ? nil : scripted.reason
            if scripted.status == 410 { result.timestamp = configuration.unregistered[key] ?? configuration.startedAtMilliseconds }
            return
        }
        if let timestamp = configuration.unregistered[key] {
            result.status = 410
            result.reason = Reason.unregistered.name
            result.timestamp = timestamp
            return
        }
        if configuration.refuseStreamsRate > 0,
           MockFaultDraw.uniform(seed: configuration.seed, token: key, attempt: attempt, salt: 1) < configuration.refuseStreamsRate {
            result.status = 0
            return
        }
        var draw = MockFaultDraw.uniform(seed: configuration.seed, token: key, attempt: attempt, salt: 2)
        for failure in configuration.failures {
            if draw < failure.rate {
                result.status = failure.status
                result.reason = failure.status == 500 ? Reason.internalServerError.name : Reason.serviceUnavailable.name
                return
            }
            draw -= failure.rate
        }
        if draw < configuration.tooManyRequestsRate {
            result.status = 429
            result.reason = Reason.tooManyRequests.name
        }
    }

    /// Attempts counted for a device token (lowercase hex); 0 when none or not counted.
    public func attemptCount(deviceToken: String) -> Int { Int(attempts[deviceToken] ?? 0) }
}

/// Where the `authorization` and `apns-*` headers of a request are (field indices), each at most once.
struct MockRequestHeaders {
    var authorization: Int?
    var topic: Int?
    var pushType: Int?
    var priority: Int?
    var expiration: Int?
    var apnsID: Int?
    var collapseID: Int?

    /// False when one of them is repeated (DuplicateHeaders). Names are compared as bytes; no
    /// `String` is made here.
    mutating func collect(_ fields: H2RequestHeaders) -> Bool {
        for index in fields.indices {
            // Pseudo-headers are checked by nghttp2; most names are rejected on the first byte.
            guard fields.nameFirstByte(at: index) == UInt8(ascii: "a") else { continue }
            let stored: Bool
            if fields.name(at: index, is: "authorization") { stored = Self.set(&authorization, index) }
            else if fields.name(at: index, is: "apns-topic") { stored = Self.set(&topic, index) }
            else if fields.name(at: index, is: "apns-push-type") { stored = Self.set(&pushType, index) }
            else if fields.name(at: index, is: "apns-priority") { stored = Self.set(&priority, index) }
            else if fields.name(at: index, is: "apns-expiration") { stored = Self.set(&expiration, index) }
            else if fields.name(at: index, is: "apns-id") { stored = Self.set(&apnsID, index) }
            else if fields.name(at: index, is: "apns-collapse-id") { stored = Self.set(&collapseID, index) }
            else { continue }
            if !stored { return false }
        }
        return true
    }

    private static func set(_ slot: inout Int?, _ index: Int) -> Bool {
        guard slot == nil else { return false }
        slot = index
        return true
    }
}

/// Deterministic draws for the random faults: a function of (seed, device token, attempt), so a
/// run's faults do not depend on the order requests arrive in.
enum MockFaultDraw {
    /// A number in [0, 1).
    static func uniform(seed: UInt64, token: String, attempt: UInt32, salt: UInt64) -> Double {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ seed
        for byte in token.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        hash = mix(hash ^ (UInt64(attempt) << 32) ^ salt &* 0x9e37_79b9_7f4a_7c15)
        return Double(hash >> 11) * 0x1.0p-53
    }

    /// SplitMix64's finaliser.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9e37_79b9_7f4a_7c15
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
