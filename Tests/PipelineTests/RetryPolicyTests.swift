import APNs
import Testing
@testable import Pipeline

/// What the sender does after each kind of answer (APNS.md's table, DESIGN.md's outcomes).
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

/// The run-level detectors every answer feeds.
@Suite struct RunControlTests {
    @Test func theFirstStopCauseWins() {
        let control = RunControl()
        #expect(!control.isStopping)
        #expect(control.stop(.interrupted(signal: 15)))
        #expect(!control.stop(.credentialsRefused(reason: "InvalidProviderToken")))
        #expect(control.isStopping)
        #expect(control.stopCause == .interrupted(signal: 15))
    }

    @Test func aStreakOfIdenticalSetupErrorsStopsTheRun() {
        let control = RunControl(abortAfter: 3)
        control.recordAnswer(delivered: false, badDeviceToken: false, setupReason: "TopicDisallowed")
        control.recordAnswer(delivered: false, badDeviceToken: false, setupReason: "TopicDisallowed")
        #expect(!control.isStopping)
        control.recordAnswer(delivered: false, badDeviceToken: false, setupReason: "TopicDisallowed")
        #expect(control.stopCause == .misconfiguration(reason: "TopicDisallowed", consecutive: 3))
    }

    @Test func anyOtherAnswerBreaksTheStreak() {
        let control = RunControl(abortAfter: 3)
        for _ in 0..<10 {
            control.recordAnswer(delivered: false, badDeviceToken: false, setupReason: "BadTopic")
            control.recordAnswer(delivered: false, badDeviceToken: false, setupReason: "BadTopic")
            control.recordAnswer(delivered: true, badDeviceToken: false, setupReason: nil)
        }
        #expect(!control.isStopping)
        control.recordAnswer(delivered: false, badDeviceToken: false, setupReason: "BadTopic")
        control.recordAnswer(delivered: false, badDeviceToken: false, setupReason: "BadPriority")
        control.recordAnswer(delivered: false, badDeviceToken: false, setupReason: "BadTopic")
        #expect(!control.isStopping, "different reasons are not identical answers")
    }

    @Test func onlyBadDeviceTokensAtTheStartMeanTheWrongEnvironment() {
        let control = RunControl(environmentWindow: 100)
        for _ in 0..<99 { control.recordAnswer(delivered: false, badDeviceToken: true, setupReason: nil) }
        #expect(!control.isStopping)
        control.recordAnswer(delivered: false, badDeviceToken: true, setupReason: nil)
        #expect(control.stopCause == .wrongEnvironment(answers: 100))
    }

    @Test func oneDeliveryEarlySettlesTheEnvironment() {
        let control = RunControl(environmentWindow: 100)
        control.recordAnswer(delivered: true, badDeviceToken: false, setupReason: nil)
        for _ in 0..<500 { control.recordAnswer(delivered: false, badDeviceToken: true, setupReason: nil) }
        #expect(!control.isStopping)
    }

    @Test func unreachableGivesUpWhileEverythingElseAborts() {
        #expect(StopCause.unreachable(seconds: 120).outcomeForUnfinishedRows == .gaveUp)
        #expect(StopCause.unreachable(seconds: 120).reasonForUnfinishedRows == "Unreachable")
        #expect(StopCause.interrupted(signal: 2).outcomeForUnfinishedRows == .aborted)
        #expect(StopCause.credentialsRefused(reason: "Forbidden").reasonForUnfinishedRows == "Forbidden")
    }
}
