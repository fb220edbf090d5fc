import Testing
@testable import Pipeline

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

    /// The streak says when a run-wide value is refused for good; the run itself goes on (the
    /// workers stop sending only the rows that use the value).
    @Test func aStreakOfIdenticalSetupErrorsReachesAbortAfter() {
        let control = RunControl(abortAfter: 3)
        #expect(!control.recordAnswer(delivered: false, badDeviceToken: false, setupReason: "TopicDisallowed"))
        #expect(!control.recordAnswer(delivered: false, badDeviceToken: false, setupReason: "TopicDisallowed"))
        #expect(control.recordAnswer(delivered: false, badDeviceToken: false, setupReason: "TopicDisallowed"))
        #expect(!control.isStopping)
    }

    @Test func theDefaultAbortAfterIsTheFirstRefusal() {
        #expect(RunControl().recordAnswer(delivered: false, badDeviceToken: false, setupReason: "BadTopic"))
    }

    @Test func anyOtherAnswerBreaksTheStreak() {
        let control = RunControl(abortAfter: 3)
        var reached = false
        for _ in 0..<10 {
            reached = control.recordAnswer(delivered: false, badDeviceToken: false, setupReason: "BadTopic") || reached
            reached = control.recordAnswer(delivered: false, badDeviceToken: false, setupReason: "BadTopic") || reached
            reached = control.recordAnswer(delivered: true, badDeviceToken: false, setupReason: nil) || reached
        }
        #expect(!reached)
        #expect(!control.recordAnswer(delivered: false, badDeviceToken: false, setupReason: "BadTopic"))
        #expect(!control.recordAnswer(delivered: false, badDeviceToken: false, setupReason: "BadPriority"))
        #expect(!control.recordAnswer(delivered: false, badDeviceToken: false, setupReason: "BadTopic"),
                "different reasons are not identical answers")
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
