import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one provider token of a signing key in this process, shared by every connection.
///
/// The refresh rule, in one place:
/// - `current` hands out the cached token until it is `scheduledRefreshAge` (50 minutes) old by
///   its `iat`, then signs a new one. APNs wants a token at most 60 minutes old and changed no
///   more often than every 20 minutes per connection; 50 keeps well inside both.
/// - `refresh(after:cause:)` with `.expiredProviderToken` (APNs said the token is too old)
///   signs a new one at once, but only if the failed token is still the current one: a burst of
///   such answers for the same token refreshes once, and later answers get the fresh token.
/// - `refresh(after:cause:)` for any other cause does the same, but never sooner than
///   `ProviderToken.minimumUpdateInterval` (20 minutes) after the current token's `iat`, so no
///   connection ever sees `TooManyProviderTokenUpdates` because of us.
///
/// Threads: every method may be called from any thread. `current` costs one uncontended lock
/// and one clock read; signing (about once per 50 minutes) happens inside the lock, so callers
/// racing past the deadline get the same new token.
public final class TokenSource: Sendable {
    /// Why a connection asks for a new token.
    public enum RefreshCause: Sendable, Equatable {
        /// APNs answered 403 `ExpiredProviderToken`.
        case expiredProviderToken
        /// Anything else (the caller's own judgement); honoured at most once per 20 minutes.
        case other
    }

    /// Seconds since 1970, read for every `current`; injected so tests can move time.
    public typealias Clock = @Sendable () -> Int64

    /// A token this old (by `iat`, in seconds) is replaced by `current`.
    public static let scheduledRefreshAge: Int64 = 50 * 60

    /// The wall clock.
    public static let systemClock: Clock = { WallClock.seconds() }

    /// The key id every token of this source carries.
    public let keyID: ProviderToken.KeyID
    /// The team id every token of this source carries.
    public let teamID: ProviderToken.TeamID
    private let signingKey: SigningKey
    private let clock: Clock
    private let token: Mutex<ProviderToken>

    /// Signs the first token now, so a key that cannot sign fails here and not on a reactor thread.
    public init(signingKey: SigningKey, keyID: ProviderToken.KeyID, teamID: ProviderToken.TeamID,
                clock: @escaping Clock = TokenSource.systemClock) throws(SigningKeyError) {
        self.signingKey = signingKey
        self.keyID = keyID
        self.teamID = teamID
        self.clock = clock
        let first = try ProviderToken(signingKey: signingKey, keyID: keyID, teamID: teamID, issuedAt: clock())
        token = Mutex(first)
    }

    /// The token to send now.
    public var current: ProviderToken {
        token.withLock { token in
            let now = clock()
            if now - token.issuedAt >= Self.scheduledRefreshAge, let fresh = sign(at: now) {
                token = fresh
            }
            return token
        }
    }

    /// Asks for a new token because `failed` was refused; returns whether a new one was signed.
    /// See the type's documentation for when it is.
    @discardableResult
    public func refresh(after failed: ProviderToken, cause: RefreshCause) -> Bool {
        token.withLock { token in
            guard failed == token else { return false }
            let now = clock()
            if cause != .expiredProviderToken && now - token.issuedAt < ProviderToken.minimumUpdateInterval {
                return false
            }
            guard let fresh = sign(at: now) else { return false }
            token = fresh
            return true
        }
    }

    /// Nil only if OpenSSL cannot sign with a key it signed with before; the caller then keeps
    /// the old token and the next call tries again.
    private func sign(at now: Int64) -> ProviderToken? {
        try? ProviderToken(signingKey: signingKey, keyID: keyID, teamID: teamID, issuedAt: now)
    }
}
