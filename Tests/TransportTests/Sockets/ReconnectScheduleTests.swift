import Testing
import Transport

struct ReconnectScheduleTests {
    @Test func consecutiveFailuresBackOffExponentiallyWithinJitterUpToTheCap() {
        var schedule = ReconnectSchedule(baseMilliseconds: 100, capMilliseconds: 1_000, healthyAfter: .seconds(30), seed: 7)
        let ceilings = [100, 200, 400, 800, 1_000, 1_000, 1_000]
        for (index, ceiling) in ceilings.enumerated() {
            let delay = schedule.connectionEnded(readyFor: nil)
            #expect(delay >= .milliseconds(ceiling / 2) && delay <= .milliseconds(ceiling), "attempt \(index + 1): \(delay)")
            #expect(schedule.consecutiveFailures == index + 1)
        }
    }

    @Test func aConnectionThatStayedUpStartsTheCountOverButStillWaits() {
        var schedule = ReconnectSchedule(baseMilliseconds: 100, capMilliseconds: 10_000, healthyAfter: .seconds(30))
        for _ in 0..<5 { _ = schedule.connectionEnded(readyFor: .seconds(1)) }
        #expect(schedule.consecutiveFailures == 5)
        let delay = schedule.connectionEnded(readyFor: .seconds(45))
        #expect(schedule.consecutiveFailures == 1)
        #expect(delay >= .milliseconds(50) && delay <= .milliseconds(100))
    }

    @Test func manyClientsFailingTogetherDoNotRetryTogether() {
        let delays = (0..<50).map { seed -> Duration in
            var schedule = ReconnectSchedule(baseMilliseconds: 1_000, capMilliseconds: 60_000, seed: UInt64(seed) &* 0x9E37_79B9)
            _ = schedule.connectionEnded(readyFor: nil)
            return schedule.connectionEnded(readyFor: nil)
        }
        #expect(Set(delays).count > 25)
        #expect(delays.allSatisfy { $0 >= .seconds(1) && $0 <= .seconds(2) })
    }

    @Test func resetForgetsTheFailures() {
        var schedule = ReconnectSchedule()
        for _ in 0..<4 { _ = schedule.connectionEnded(readyFor: nil) }
        schedule.reset()
        #expect(schedule.consecutiveFailures == 0)
        #expect(schedule.connectionEnded(readyFor: nil) <= .seconds(1))
    }

    @Test func aConnectionAnsweredThenEndedInOrderIsReplacedAtOnceHoweverOftenItHappens() {
        var schedule = ReconnectSchedule(baseMilliseconds: 1_000, capMilliseconds: 60_000, replaceJitterMilliseconds: 5,
                                         seed: 11)
        // A server that says GOAWAY after every few hundred streams: each connection lived well
        // under healthyAfter, yet none of them is a failure.
        let delays = (0..<500).map { _ in
            schedule.connectionEnded(readyFor: .milliseconds(40), answered: true, graceful: true)
        }
        #expect(delays.allSatisfy { $0 <= .milliseconds(5) }, "\(delays.max()!)")
        #expect(Set(delays).count > 100, "jittered, so connections told to go away together do not return together")
        #expect(schedule.consecutiveFailures == 0)
    }

    @Test func anOrderlyEndAfterFailuresStartsTheCountOver() {
        var schedule = ReconnectSchedule(baseMilliseconds: 100, capMilliseconds: 10_000)
        for _ in 0..<6 { _ = schedule.connectionEnded(readyFor: nil) }
        #expect(schedule.connectionEnded(readyFor: .milliseconds(5), answered: true, graceful: true) <= .milliseconds(5))
        #expect(schedule.consecutiveFailures == 0)
        let next = schedule.connectionEnded(readyFor: nil)
        #expect(next >= .milliseconds(50) && next <= .milliseconds(100), "the first step again: \(next)")
    }

    @Test func connectionsThatEndBeforeAnyAnswerBackOffEvenWhenTheyEndInOrder() {
        var schedule = ReconnectSchedule(baseMilliseconds: 100, capMilliseconds: 10_000, seed: 3)
        let ceilings = [100, 200, 400, 800]
        for (index, ceiling) in ceilings.enumerated() {
            // GOAWAY right after SETTINGS, every time: the endpoint never answered.
            let delay = schedule.connectionEnded(readyFor: .milliseconds(2), answered: false, graceful: true)
            #expect(delay >= .milliseconds(ceiling / 2) && delay <= .milliseconds(ceiling), "attempt \(index + 1): \(delay)")
        }
        #expect(schedule.consecutiveFailures == 4)
    }

    @Test func aConnectionAnsweredThenBrokenWaitsTheFirstStepOnly() {
        var schedule = ReconnectSchedule(baseMilliseconds: 100, capMilliseconds: 10_000, seed: 5)
        for _ in 0..<6 { _ = schedule.connectionEnded(readyFor: nil) }
        // A reset after answers: the endpoint works, but a broken connection still gets a pause.
        let delay = schedule.connectionEnded(readyFor: .milliseconds(300), answered: true, graceful: false)
        #expect(delay >= .milliseconds(50) && delay <= .milliseconds(100), "\(delay)")
        #expect(schedule.consecutiveFailures == 1)
    }
}
