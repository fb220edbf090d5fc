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
/// - `expired(_:)` is what a connection calls on `ExpiredProviderToken`: it refreshes as above,
///   and tells when the clocks must disagree. Our tokens are never older than 50 minutes by our
///   clock; when APNs keeps calling tokens expired that this machine signed minutes ago (the
///   current one, refreshed because of the same answer, `clockSuspectAfter` times), retrying only
///   burns the list: this machine's clock is behind (or far ahead of) APNs'.
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

    /// What an `ExpiredProviderToken` answer for a token means.
    public enum ExpiredVerdict: Sendable, Equatable {
        /// Send again with `current`: a new token was signed for the refused one, now or for an
        /// earlier answer about it.
        case retry
        /// Tokens signed minutes ago keep being refused as expired: the clocks disagree.
        /// `ageSeconds` is the refused token's age by this machine's clock.
        case clockSuspect(ageSeconds: Int64)
    }

    /// A token refused as expired while younger than this by our clock (APNs' limit is 60
    /// minutes) points at a clock that differs from APNs' by minutes.
    public static let implausibleExpiryAge: Int64 = 55 * 60

    /// How many of our current tokens, each refused as expired while younger than
    /// `implausibleExpiryAge`, make `expired(_:)` suspect the clock. One can be a glitch (or a
    /// scripted answer); the fresh token that replaced it refused too, and its own replacement,
    /// cannot be.
    public static let clockSuspectAfter = 3

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
    /// Current tokens refused as expired although younger than `implausibleExpiryAge`.
    private let implausibleRefusals = Atomic<Int>(0)

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

    /// Called for every `ExpiredProviderToken` answer to a request signed with `failed`: refreshes
    /// the token once per refused token (as `refresh(after:cause:)` does), and says whether to
    /// retry or to suspect the clock (see the type's documentation).
    public func expired(_ failed: ProviderToken) -> ExpiredVerdict {
        token.withLock { token in
            let now = clock()
            let age = now - failed.issuedAt
            if failed == token {
                if age < Self.implausibleExpiryAge { implausibleRefusals.add(1, ordering: .relaxed) }
                if let fresh = sign(at: now) { token = fresh }
            }
            if implausibleRefusals.load(ordering: .relaxed) >= Self.clockSuspectAfter {
                return .clockSuspect(ageSeconds: max(0, age))
            }
            return .retry
        }
    }

    /// Nil only if OpenSSL cannot sign with a key it signed with before; the caller then keeps
    /// the old token and the next call tries again.
    private func sign(at now: Int64) -> ProviderToken? {
        try? ProviderToken(signingKey: signingKey, keyID: keyID, teamID: teamID, issuedAt: now)
    }
}
