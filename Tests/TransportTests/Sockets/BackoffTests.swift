import Testing
import Transport

@Suite struct BackoffTests {
    @Test func eachDelayIsWithinHalfToAllOfItsDoublingCeiling() {
        var backoff = Backoff(baseMilliseconds: 100, capMilliseconds: 5000, seed: 42)
        for attempt in 1...12 {
            let ceiling = min(5000, 100 << (attempt - 1))
            #expect(backoff.ceilingMilliseconds(attempt: attempt) == ceiling)
            for _ in 0..<50 {
                let delay = backoff.delayMilliseconds(attempt: attempt)
                #expect(delay >= ceiling / 2 && delay <= ceiling, "attempt \(attempt): \(delay)")
            }
        }
    }

    @Test func jitterSpreadsClientsThatFailedTogether() {
        var backoff = Backoff(baseMilliseconds: 1000, capMilliseconds: 60_000, seed: 7)
        let delays = Set((0..<100).map { _ in backoff.delayMilliseconds(attempt: 3) })
        #expect(delays.count > 50)
    }

    @Test func hugeAttemptNumbersStayAtTheCap() {
        var backoff = Backoff(baseMilliseconds: 500, capMilliseconds: 60_000)
        #expect(backoff.ceilingMilliseconds(attempt: 1000) == 60_000)
        #expect(backoff.delayMilliseconds(attempt: Int.max) <= 60_000)
    }
}
