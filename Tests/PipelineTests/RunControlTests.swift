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
