import APNs
import Transport
import Glibc

/// What one connection remembers between its requests: the provider token it used last (and its
/// `iat`), whether a request already passed the authorization check (then its stream limit is
/// raised), and the last topic accepted (the checks of a repeated value are answered from it).
public struct MockConnectionAuth: Sendable {
    var token: String?
    /// The `authorization` value that carried `token`, as received.
    var authorizationValue: [UInt8] = []
    var issuedAt: Int64 = 0
    public internal(set) var isAuthorized = false
    var acceptedTopic: (topic: [UInt8], pushType: PushType?)?

    /// A new connection's: no token seen, not yet authorized.
    public init() {}
}

/// Verdicts on provider tokens, each distinct token verified once (ES256 is costly) and
/// remembered; the cache is bounded and starts over when full. Reactor thread only.
final class MockTokenCache {
    enum Verdict {
        case valid(issuedAt: Int64)
        case invalid
    }

    private let verifier: TokenVerifier
    private let capacity: Int
    private var verdicts: [String: Verdict] = [:]

    init(verifier: TokenVerifier, capacity: Int) {
        self.verifier = verifier
        self.capacity = max(1, capacity)
    }

    func verdict(_ jwt: String) -> Verdict {
        if let known = verdicts[jwt] { return known }
        let verdict: Verdict
        do {
            verdict = .valid(issuedAt: try verifier.verify(jwt))
        } catch {
            verdict = .invalid
        }
        if verdicts.count >= capacity { verdicts.removeAll(keepingCapacity: true) }
        verdicts[jwt] = verdict
        return verdict
    }
}

/// APNs' authorization check (APNS.md): MissingProviderToken, InvalidProviderToken,
/// ExpiredProviderToken, then TooManyProviderTokenUpdates for a connection that switches to a
/// token issued less than 20 minutes after its previous one.
struct MockAuthorizer {
    let cache: MockTokenCache?

    /// `check(authorization:)` on field `index` of `fields` (nil: absent): the value that carried
    /// the connection's current token needs only the age check, and no `String`.
    func check(authorization index: Int?, in fields: H2RequestHeaders, connection: inout MockConnectionAuth,
               now: Int64) -> Reason? {
        if let index, connection.token != nil, fields.value(at: index, equals: connection.authorizationValue) {
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
        guard let authorization, let jwt = Self.bearerToken(authorization) else { return .missingProviderToken }
        guard let cache else {
            connection.isAuthorized = true
            return nil
        }
        if let current = connection.token, current == jwt {
            if (try? TokenVerifier.checkAge(issuedAt: connection.issuedAt, now: now)) == nil { return .expiredProviderToken }
            return nil
        }
        let text = String(jwt)
        guard case .valid(let issuedAt) = cache.verdict(text) else { return .invalidProviderToken }
        if (try? TokenVerifier.checkAge(issuedAt: issuedAt, now: now)) == nil { return .expiredProviderToken }
        if connection.token != nil,
           TokenVerifier.isUpdateTooSoon(previousIssuedAt: connection.issuedAt, issuedAt: issuedAt) {
            return .tooManyProviderTokenUpdates
        }
        connection.token = text
        connection.issuedAt = issuedAt
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
