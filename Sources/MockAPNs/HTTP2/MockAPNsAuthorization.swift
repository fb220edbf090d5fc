import APNs
import Transport
import Glibc

/// What one connection remembers between its requests: the provider token it used last (and its
/// `iat` and key), whether a request already passed the authorization check (then its stream limit
/// is raised), the key its first accepted push fixed, and the last topic accepted (the checks of a
/// repeated value are answered from it).
public struct MockConnectionAuth: Sendable {
    var token: String?
    /// The `authorization` value that carried `token`, as received.
    var authorizationValue: [UInt8] = []
    var issuedAt: Int64 = 0
    public internal(set) var isAuthorized = false
    var acceptedTopic: (topic: [UInt8], pushType: PushType?, key: Int?)?
    /// The last accepted app and broadcast headers of the broadcast side.
    var acceptedBroadcast = MockAcceptedBroadcast()
    /// The key (index in the server's keys) of `token`.
    var tokenKey: Int?
    /// The key of the request checked last, when its token verified (refused or not): what the
    /// record names and whose topics apply.
    var requestKey: Int?
    /// The key of the connection's first push that passed authorization: tokens of keys not
    /// related to it are refused (UnrelatedKeyIdInToken).
    var boundKey: Int?
    /// The `iat` of the last token of each key used here (the bound key and its related one), for
    /// the update rule, which holds per key.
    var issuedAtByKey: [(key: Int, issuedAt: Int64)] = []

    /// A new connection's: no token seen, not yet authorized.
    public init() {}
}

/// Verdicts on provider tokens, each distinct token verified once (ES256 is costly) and
/// remembered; the cache is bounded and starts over when full. Reactor thread only.
final class MockTokenCache {
    enum Verdict {
        /// Signed by key `key` (an index in the server's keys).
        case valid(issuedAt: Int64, key: Int)
        case invalid
    }

    private let verifiers: [TokenVerifier]
    private let capacity: Int
    private var verdicts: [String: Verdict] = [:]

    init(verifiers: [TokenVerifier], capacity: Int) {
        self.verifiers = verifiers
        self.capacity = max(1, capacity)
    }

    func verdict(_ jwt: String) -> Verdict {
        if let known = verdicts[jwt] { return known }
        var verdict = Verdict.invalid
        // A verifier refuses another key's token at its `kid`, before any signature is checked.
        for (index, verifier) in verifiers.enumerated() {
            if let issuedAt = try? verifier.verify(jwt) {
                verdict = .valid(issuedAt: issuedAt, key: index)
                break
            }
        }
        if verdicts.count >= capacity { verdicts.removeAll(keepingCapacity: true) }
        verdicts[jwt] = verdict
        return verdict
    }
}

/// APNs' authorization check (docs/apns.md, "Authentication"): MissingProviderToken, InvalidProviderToken,
/// ExpiredProviderToken, BadEnvironmentKeyIdInToken for a key restricted to the other
/// environment, UnrelatedKeyIdInToken for a key not related to the connection's first, then
/// TooManyProviderTokenUpdates for a connection that switches to a token of a key issued less than
/// 20 minutes after that key's previous one there.
struct MockAuthorizer {
    let cache: MockTokenCache?
    let keys: MockKeyRing

    /// `check(authorization:)` on field `index` of `fields` (nil: absent): the value that carried
    /// the connection's current token needs only the age check, and no `String`.
    func check(authorization index: Int?, in fields: H2RequestHeaders, connection: inout MockConnectionAuth,
               now: Int64) -> Reason? {
        if let index, connection.token != nil, fields.value(at: index, equals: connection.authorizationValue) {
            connection.requestKey = connection.tokenKey
            if (try? TokenVerifier.checkAge(issuedAt: connection.issuedAt, now: now)) == nil { return .expiredProviderToken }
            return nil
        }
        let previous = connection.token
        let reason = check(authorization: index.map { fields.value(at: $0) }, connection: &connection, now: now)
        if let index, let current = connection.token, previous != current {
            connection.authorizationValue = fields.valueBytes(at: index)
        }
        return reason
    }

    /// The reason to refuse, or nil (and `connection` updated) when the request may go on.
    func check(authorization: String?, connection: inout MockConnectionAuth, now: Int64) -> Reason? {
        connection.requestKey = nil
        guard let authorization, let jwt = Self.bearerToken(authorization) else { return .missingProviderToken }
        guard let cache else {
            connection.isAuthorized = true
            return nil
        }
        if let current = connection.token, current == jwt {
            connection.requestKey = connection.tokenKey
            if (try? TokenVerifier.checkAge(issuedAt: connection.issuedAt, now: now)) == nil { return .expiredProviderToken }
            return nil
        }
        let text = String(jwt)
        guard case .valid(let issuedAt, let key) = cache.verdict(text) else { return .invalidProviderToken }
        connection.requestKey = key
        if (try? TokenVerifier.checkAge(issuedAt: issuedAt, now: now)) == nil { return .expiredProviderToken }
        if keys.entries[key].wrongEnvironment { return .badEnvironmentKeyIdInToken }
        if let bound = connection.boundKey, !keys.mayShare(bound: bound, with: key) { return .unrelatedKeyIdInToken }
        // Back to a key's own token (related keys alternating on a connection) is no update.
        let slot = connection.issuedAtByKey.firstIndex { $0.key == key }
        if let slot, connection.issuedAtByKey[slot].issuedAt != issuedAt,
           TokenVerifier.isUpdateTooSoon(previousIssuedAt: connection.issuedAtByKey[slot].issuedAt, issuedAt: issuedAt) {
            return .tooManyProviderTokenUpdates
        }
        if let slot { connection.issuedAtByKey[slot].issuedAt = issuedAt } else {
            connection.issuedAtByKey.append((key, issuedAt))
        }
        connection.token = text
        connection.issuedAt = issuedAt
        connection.tokenKey = key
        if connection.boundKey == nil { connection.boundKey = key }
        connection.isAuthorized = true
        return nil
    }

    /// The JWT of `bearer <jwt>` (scheme case-insensitive, as HTTP says), nil when absent or empty.
    static func bearerToken(_ value: String) -> Substring? {
        let utf8 = value.utf8
        guard utf8.count > 7 else { return nil }
        let scheme = utf8.prefix(7)
        guard scheme.elementsEqual("bearer ".utf8, by: { a, b in a | 0x20 == b || (a == 0x20 && b == 0x20) }) else {
            return nil
        }
        let token = Substring(value.utf8.dropFirst(7))
        return token.isEmpty ? nil : token
    }
}

/// Seconds since 1970, without Foundation.
func unixSeconds() -> Int64 { WallClock.seconds() }

/// Milliseconds since 1970, without Foundation.
func unixMilliseconds() -> Int64 { WallClock.milliseconds() }
