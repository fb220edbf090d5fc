import APNs
import Testing
@testable import Pipeline

/// What the sender does after each kind of answer (docs/apns.md, "The response"; docs/file-formats.md, "Outcomes").
@Suite struct RetryPolicyTests {
    var policy = RetryPolicy(maxAttempts: 5, baseMilliseconds: 500, capMilliseconds: 60_000, seed: 1)
    let now: Int64 = 1_800_000_000_000

    @Test(arguments: [
        (Disposition.delivered, Outcome.delivered), (.deadToken, .unregistered), (.badToken, .badToken),
        (.permanent, .failed),
    ])
    mutating func finalAnswersFinishTheRow(disposition: Disposition, outcome: Outcome) {
        #expect(policy.decide(disposition, attempts: 1, expiration: 0, nowMilliseconds: now) == .finish(outcome))
    }

    @Test mutating func credentialsRefusedStopsTheRun() {
        #expect(policy.decide(.credentialsRefused, attempts: 1, expiration: 0, nowMilliseconds: now) == .stopRun)
    }

    @Test mutating func tooManyRequestsRetriesTheTokenAfterAGrowingBackoff() {
        var ceilings: [Int] = []
        for attempt in 1...4 {
            guard case .retry(let delay, let elsewhere) = policy.decide(.retryLater(.perDeviceToken), attempts: attempt,
                                                                        expiration: 0, nowMilliseconds: now) else {
                Issue.record("attempt \(attempt) should be retried")
                return
            }
            #expect(!elsewhere)
            let ceiling = 500 << (attempt - 1)
            #expect(delay >= ceiling / 2 && delay <= ceiling, "attempt \(attempt): \(delay) ms")
            ceilings.append(ceiling)
        }
        #expect(policy.decide(.retryLater(.perDeviceToken), attempts: 5, expiration: 0, nowMilliseconds: now)
                == .finish(.gaveUp))
    }

    @Test mutating func serverErrorsPreferAnotherConnection() {
        guard case .retry(_, let elsewhere) = policy.decide(.retryLater(.connection), attempts: 1, expiration: 0,
                                                            nowMilliseconds: now) else {
            Issue.record("a 503 is retried")
            return
        }
        #expect(elsewhere)
    }

    @Test mutating func expiredProviderTokenRefreshesThenRetries() {
        #expect(policy.decide(.refreshToken, attempts: 1, expiration: 0, nowMilliseconds: now) == .refreshTokenAndRetry)
        #expect(policy.decide(.refreshToken, attempts: 5, expiration: 0, nowMilliseconds: now) == .finish(.gaveUp))
    }

    @Test mutating func aNotificationsOwnExpirationBoundsItsRetries() {
        // Expires in one second: a backoff of at least 250 ms on attempt 2 (ceiling 1 s) may pass it;
        // one already expired always gives up.
        let expired = now / 1000 - 1
        #expect(policy.decide(.retryLater(.perDeviceToken), attempts: 1, expiration: expired, nowMilliseconds: now)
                == .finish(.gaveUp))
        let farAway = now / 1000 + 3600
        if case .finish = policy.decide(.retryLater(.perDeviceToken), attempts: 1, expiration: farAway, nowMilliseconds: now) {
            Issue.record("an expiration an hour away leaves room to retry")
        }
        // 0 sets no limit.
        if case .finish = policy.decide(.retryLater(.perDeviceToken), attempts: 1, expiration: 0, nowMilliseconds: now) {
            Issue.record("expiration 0 sets no limit")
        }
    }

    @Test mutating func aLostConnectionRetriesAtOnceUntilTheAttemptsRunOut() {
        #expect(policy.decideAfterConnectionLoss(attempts: 1, expiration: 0, nowMilliseconds: now)
                == .retry(delayMilliseconds: 0, elsewhere: true))
        #expect(policy.decideAfterConnectionLoss(attempts: 5, expiration: 0, nowMilliseconds: now) == .finish(.gaveUp))
    }
}
