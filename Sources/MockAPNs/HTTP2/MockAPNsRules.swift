import APNs
import Glibc
import Transport

/// APNs' rules applied to one request, in docs/apns.md's "Order of checks" (first failure answers), then the
/// per-token state and the injected faults. Owns the shared state of a server: the token cache
/// and the attempt numbers. Reactor thread only (one server, one thread).
public final class MockAPNsRules {
    /// The server's configuration: the rules and faults applied.
    public let configuration: MockAPNsConfiguration
    private let authorizer: MockAuthorizer
    private var attempts: [String: UInt32] = [:]
    private let lookupByToken: Bool
    private let usesCertificates: Bool
    private let topics: Set<String>
    private let keyRing: MockKeyRing

    /// The rules of a server with `configuration`; verifies no token yet.
    public init(configuration: MockAPNsConfiguration) {
        self.configuration = configuration
        var cache: MockTokenCache?
        let keys = configuration.tokenKeys
        if !keys.isEmpty {
            cache = MockTokenCache(verifiers: keys.map(\.verifier), capacity: configuration.tokenCacheCapacity)
        }
        keyRing = MockKeyRing(keys: keys, environment: configuration.environment, serverTopics: configuration.topics)
        authorizer = MockAuthorizer(cache: cache, keys: keyRing)
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
            result.key = connection.requestKey
            return result
        }
        result.key = connection.requestKey
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

    /// The first check that fails, in docs/apns.md's order.
    private func check(method: String, path: String, fields: H2RequestHeaders, body: [UInt8], bodyLength: Int,
                       connection: inout MockConnectionAuth, now: Int64, into result: inout MockAnswer) -> Reason? {
        connection.requestKey = nil
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
        let key = connection.requestKey
        if let index, let accepted = connection.acceptedTopic, accepted.pushType == pushType, accepted.key == key,
           fields.value(at: index, equals: accepted.topic) {
            return nil
        }
        let reason = checkTopic(index.map { fields.value(at: $0) }, pushType: pushType, key: key)
        if reason == nil, let index { connection.acceptedTopic = (fields.valueBytes(at: index), pushType, key) }
        return reason
    }

    private func checkTopic(_ topic: String?, pushType: PushType?, key: Int?) -> Reason? {
        // A topic-specific key serves its own bundle ids only (those the server serves, if it names any).
        if let key, let allowed = keyRing.entries[key].allowedTopics {
            return HeaderRules.checkTopic(topic, pushType: pushType, allowedBundleIDs: allowed)
        }
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
        if let fault = randomFault(key: key, attempt: attempt) {
            result.status = fault.status
            result.reason = fault.reason?.name
        }
    }

    /// The random faults of a request that passed every check, drawn by (seed, `key`, attempt):
    /// a refused stream (status 0), 500 InternalServerError or 503 ServiceUnavailable, 429
    /// TooManyRequests; nil for none. `key` is a device token (lowercase hex) or a channel id.
    func randomFault(key: String, attempt: UInt32) -> (status: Int, reason: Reason?)? {
        if configuration.refuseStreamsRate > 0,
           MockFaultDraw.uniform(seed: configuration.seed, token: key, attempt: attempt, salt: 1) < configuration.refuseStreamsRate {
            return (0, nil)
        }
        var draw = MockFaultDraw.uniform(seed: configuration.seed, token: key, attempt: attempt, salt: 2)
        for failure in configuration.failures {
            if draw < failure.rate {
                return (failure.status, failure.status == 500 ? .internalServerError : .serviceUnavailable)
            }
            draw -= failure.rate
        }
        return draw < configuration.tooManyRequestsRate ? (429, .tooManyRequests) : nil
    }

    /// The authorization check of device pushes, for a broadcast or channel request: nil when it
    /// passes (always with certificates, which TLS checked).
    func authorize(_ index: Int?, in fields: H2RequestHeaders, connection: inout MockConnectionAuth,
                   now: Int64) -> Reason? {
        if usesCertificates { return nil }
        return authorizer.check(authorization: index, in: fields, connection: &connection, now: now)
    }

    /// Whether the request's credentials serve app `bundleID`: a topic-specific key its own apps,
    /// otherwise the apps the server serves (`--topic`, a certificate's), or any when it names none.
    func serves(bundleID: String, key: Int?) -> Bool {
        if let key, let allowed = keyRing.entries[key].allowedTopics { return allowed.contains(bundleID) }
        return topics.isEmpty || topics.contains(bundleID)
    }

    /// The key id of key `index` (`MockAnswer.key`), for the record.
    func keyID(_ index: Int) -> String { keyRing.entries[index].keyID }

    /// Attempts counted for a device token (lowercase hex); 0 when none or not counted.
    public func attemptCount(deviceToken: String) -> Int { Int(attempts[deviceToken] ?? 0) }
}
