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
        #expect(!control.recordAnswer(setupReason: "TopicDisallowed"))
        #expect(!control.recordAnswer(setupReason: "TopicDisallowed"))
        #expect(control.recordAnswer(setupReason: "TopicDisallowed"))
        #expect(!control.isStopping)
    }

    @Test func theDefaultAbortAfterIsTheFirstRefusal() {
        #expect(RunControl().recordAnswer(setupReason: "BadTopic"))
    }

    @Test func anyOtherAnswerBreaksTheStreak() {
        let control = RunControl(abortAfter: 3)
        var reached = false
        for _ in 0..<10 {
            reached = control.recordAnswer(setupReason: "BadTopic") || reached
            reached = control.recordAnswer(setupReason: "BadTopic") || reached
            reached = control.recordAnswer(setupReason: nil) || reached
        }
        #expect(!reached)
        #expect(!control.recordAnswer(setupReason: "BadTopic"))
        #expect(!control.recordAnswer(setupReason: "BadPriority"))
        #expect(!control.recordAnswer(setupReason: "BadTopic"),
                "different reasons are not identical answers")
    }

    @Test func unreachableGivesUpWhileEverythingElseAborts() {
        #expect(StopCause.unreachable(seconds: 120).outcomeForUnfinishedRows == .gaveUp)
        #expect(StopCause.unreachable(seconds: 120).reasonForUnfinishedRows == "Unreachable")
        #expect(StopCause.interrupted(signal: 2).outcomeForUnfinishedRows == .aborted)
        #expect(StopCause.credentialsRefused(reason: "Forbidden").reasonForUnfinishedRows == "Forbidden")
    }
}
