import Dispatch
import Synchronization
import Testing
@testable import APNs

/// A clock the test moves by hand.
final class ManualClock: Sendable {
    private let seconds: Atomic<Int64>

    init(_ start: Int64) { seconds = Atomic(start) }

    var now: Int64 { seconds.load(ordering: .relaxed) }

    func advance(minutes: Int64, seconds extra: Int64 = 0) {
        seconds.add(minutes * 60 + extra, ordering: .relaxed)
    }

    var closure: TokenSource.Clock { { self.now } }
}

@Suite struct TokenSourceTests {
    static let start: Int64 = 1_700_000_000

    private func makeSource() throws -> (TokenSource, ManualClock, SigningKey) {
        let clock = ManualClock(Self.start)
        let key = try SigningKey.generate()
        let source = try TokenSource(signingKey: key, keyID: ProviderToken.KeyID("ABC1234567"),
                                     teamID: ProviderToken.TeamID("TEAM123456"), clock: clock.closure)
        return (source, clock, key)
    }

    @Test func sameTokenWithinFiftyMinutes() throws {
        let (source, clock, _) = try makeSource()
        let first = source.current
        #expect(first.issuedAt == Self.start)
        clock.advance(minutes: 49, seconds: 59)
        #expect(source.current == first)
    }

    @Test func newTokenAfterFiftyMinutes() throws {
        let (source, clock, key) = try makeSource()
        let first = source.current
        clock.advance(minutes: 50)
        let second = source.current
        #expect(second != first)
        #expect(second.issuedAt == Self.start + 50 * 60)
        #expect(source.current == second)
        #expect(KeyFixtures.openSSLVerifies(jwt: second.jwt, publicKeyPEM: try key.publicKeyPEM()))
    }

    @Test func expiredProviderTokenIsRegeneratedOnceForABurst() throws {
        let (source, clock, _) = try makeSource()
        let failed = source.current
        clock.advance(minutes: 1)
        #expect(source.refresh(after: failed, cause: .expiredProviderToken))
        let fresh = source.current
        #expect(fresh != failed)
        #expect(fresh.issuedAt == Self.start + 60)
        // More answers for the same failed token (requests already in flight) change nothing.
        #expect(!source.refresh(after: failed, cause: .expiredProviderToken))
        #expect(source.current == fresh)
    }

    @Test func expiredProviderTokenForTheFreshTokenRegeneratesAgain() throws {
        let (source, clock, _) = try makeSource()
        #expect(source.refresh(after: source.current, cause: .expiredProviderToken))
        clock.advance(minutes: 0, seconds: 5)
        let second = source.current
        #expect(source.refresh(after: second, cause: .expiredProviderToken))
        #expect(source.current != second)
    }

    @Test func otherCausesRefreshAtMostOncePerTwentyMinutes() throws {
        let (source, clock, _) = try makeSource()
        let first = source.current
        clock.advance(minutes: 19, seconds: 59)
        #expect(!source.refresh(after: first, cause: .other))
        #expect(source.current == first)

        clock.advance(minutes: 0, seconds: 1)
        #expect(source.refresh(after: first, cause: .other))
        let second = source.current
        #expect(second != first)
        #expect(second.issuedAt == Self.start + 20 * 60)

        clock.advance(minutes: 10)
        #expect(!source.refresh(after: second, cause: .other))
        #expect(source.current == second)
    }

    @Test func staleFailedTokenNeverRefreshesForAnyCause() throws {
        let (source, clock, _) = try makeSource()
        let first = source.current
        clock.advance(minutes: 50)
        let second = source.current
        clock.advance(minutes: 30)
        #expect(!source.refresh(after: first, cause: .other))
        #expect(!source.refresh(after: first, cause: .expiredProviderToken))
        #expect(source.current == second)
    }

    @Test func concurrentCallersAfterTheDeadlineAllGetTheSameNewToken() throws {
        let (source, clock, _) = try makeSource()
        let first = source.current
        clock.advance(minutes: 50)
        let seen = Mutex<[String: Int]>([:])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            var local: [String: Int] = [:]
            for _ in 0..<500 { local[source.current.jwt, default: 0] += 1 }
            seen.withLock { seen in seen.merge(local, uniquingKeysWith: +) }
        }
        let tokens = seen.withLock { $0 }
        #expect(tokens.count == 1)
        #expect(tokens.values.reduce(0, +) == 8 * 500)
        #expect(tokens.keys.first != first.jwt)
    }

    @Test func concurrentExpiredAnswersForOneTokenRefreshExactlyOnce() throws {
        let (source, _, _) = try makeSource()
        let failed = source.current
        let refreshed = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            if source.refresh(after: failed, cause: .expiredProviderToken) {
                refreshed.add(1, ordering: .relaxed)
            }
            _ = source.current
        }
        #expect(refreshed.load(ordering: .relaxed) == 1)
        #expect(source.current != failed)
    }

    @Test func oneExpiredAnswerForAFreshTokenRefreshesAndRetries() throws {
        let (source, clock, _) = try makeSource()
        let failed = source.current
        clock.advance(minutes: 2)
        #expect(source.expired(failed) == .retry)
        let fresh = source.current
        #expect(fresh != failed)
        // The rest of the burst for the same token neither refreshes again nor counts.
        for _ in 0..<20 { #expect(source.expired(failed) == .retry) }
        #expect(source.current == fresh)
    }

    @Test func freshTokensRefusedAgainAndAgainMakeTheClockSuspect() throws {
        let (source, clock, _) = try makeSource()
        var verdicts: [TokenSource.ExpiredVerdict] = []
        for _ in 0..<TokenSource.clockSuspectAfter {
            clock.advance(minutes: 1)
            verdicts.append(source.expired(source.current))
        }
        #expect(verdicts.dropLast().allSatisfy { $0 == .retry })
        #expect(verdicts.last == .clockSuspect(ageSeconds: 60))
        // Late answers about older tokens say the same from then on.
        #expect(source.expired(source.current) != .retry)
    }

    @Test func tokensRefusedAsExpiredWhenTrulyOldNeverSuspectTheClock() throws {
        let (source, clock, _) = try makeSource()
        for _ in 0..<(TokenSource.clockSuspectAfter + 2) {
            let old = source.current
            // A machine that slept: the token is over an hour old by our clock as well.
            clock.advance(minutes: 61)
            #expect(source.expired(old) == .retry)
        }
    }
}
