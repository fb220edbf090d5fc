import Testing
@testable import Pipeline

/// The pacer's arithmetic on a simulated clock (nanoseconds), where windows can be counted exactly.
@Suite struct PacerTests {
    /// Permit instants of a taker that asks for `wanted` permits every `step` ns for `duration` ns.
    private static func greedy(_ pacer: Pacer, wanted: Int, step: UInt64, duration: UInt64,
                               start: UInt64 = 5_000_000_000) -> [UInt64] {
        var times: [UInt64] = []
        var now = start
        while now < start + duration {
            let granted = pacer.take(upTo: wanted, now: now)
            times += Array(repeating: now, count: granted)
            now += step
        }
        return times
    }

    /// The most permits inside any window of `width` ns.
    private static func busiest(_ times: [UInt64], width: UInt64) -> Int {
        var best = 0, first = 0
        for last in times.indices {
            while times[last] - times[first] >= width { first += 1 }
            best = max(best, last - first + 1)
        }
        return best
    }

    @Test func noWindowGetsMoreThanTheRateAndTheBurst() {
        let pacer = Pacer(rate: 200)
        #expect(pacer.burst == 2)
        let times = Self.greedy(pacer, wanted: 50, step: 1_000_000, duration: 3_000_000_000)
        #expect(Self.busiest(times, width: 100_000_000) <= 20 + pacer.burst)
        #expect(Self.busiest(times, width: 1_000_000_000) <= 200 + pacer.burst)
        // And it is a pace, not a trickle: three seconds give three seconds' worth.
        #expect(times.count >= 600 && times.count <= 600 + pacer.burst)
    }

    @Test func theBurstIsTenMillisecondsWorthAndAtLeastOne() {
        #expect(Pacer(rate: 100_000).burst == 1000)
        #expect(Pacer(rate: 50).burst == 1)
        #expect(Pacer(rate: 0.5).burst == 1)
        let fast = Pacer(rate: 100_000)
        let times = Self.greedy(fast, wanted: 1000, step: 250_000, duration: 1_000_000_000)
        #expect(Self.busiest(times, width: 100_000_000) <= 10_000 + 1000)
        #expect(times.count >= 100_000 - 25 && times.count <= 100_000 + 1000)
    }

    @Test func halfAPermitPerSecondIsOneEveryTwoSeconds() {
        let pacer = Pacer(rate: 0.5)
        let start: UInt64 = 10_000_000_000
        #expect(pacer.take(upTo: 10, now: start) == 1)
        #expect(pacer.take(upTo: 10, now: start + 1_999_999_999) == 0)
        #expect(pacer.wait(now: start + 1_000_000_000) == 1_000_000_000)
        #expect(pacer.take(upTo: 10, now: start + 2_000_000_000) == 1)
    }

    @Test func waitSaysExactlyWhenTheNextPermitIsDue() {
        let pacer = Pacer(rate: 1000)
        let start: UInt64 = 7_000_000_000
        #expect(pacer.take(upTo: 100, now: start) == pacer.burst)
        let wait = pacer.wait(now: start)
        #expect(wait > 0)
        #expect(pacer.take(upTo: 1, now: start + wait - 1) == 0)
        #expect(pacer.take(upTo: 1, now: start + wait) == 1)
    }

    @Test func permitsGivenBackCanBeTakenAgainButLendNoExtraBurst() {
        let pacer = Pacer(rate: 100)
        let start: UInt64 = 3_000_000_000
        #expect(pacer.take(upTo: 5, now: start) == 1)
        pacer.giveBack(1, now: start)
        #expect(pacer.take(upTo: 5, now: start) == 1, "the permit given back is there again")
        // Given back long after: the bucket is full anyway, and stays one burst deep.
        pacer.giveBack(1, now: start + 5_000_000_000)
        #expect(pacer.take(upTo: 5, now: start + 5_000_000_000) == 1)
    }
}

@Suite struct PacerDurationTests {
    @Test func durationsWithUnitsAreSeconds() {
        #expect(PacerDuration.seconds(parsing: "90s") == 90)
        #expect(PacerDuration.seconds(parsing: "30m") == 1800)
        #expect(PacerDuration.seconds(parsing: "2h") == 7200)
        #expect(PacerDuration.seconds(parsing: "1h30m") == 5400)
        #expect(PacerDuration.seconds(parsing: "1h0m5s") == 3605)
        #expect(PacerDuration.seconds(parsing: "1.5h") == 5400)
        #expect(PacerDuration.seconds(parsing: "0s") == 0, "no spread")
    }

    @Test func aNumberWithoutUnitsOrUnitsOutOfOrderAreRefused() {
        for text in ["30", "", "m", "30x", "1m1h", "1h1h", "0", "-5m", "1..5h", "5m 3s"] {
            #expect(PacerDuration.seconds(parsing: text) == nil, "\(text)")
        }
    }

    @Test func rateTextIsShortAndExact() {
        #expect(PacerDuration.text(rate: 200) == "200")
        #expect(PacerDuration.text(rate: 0.5) == "0.5")
        #expect(PacerDuration.text(rate: 0.05) == "0.05")
        #expect(PacerDuration.text(rate: 33.333) == "33.33")
        #expect(PacerDuration.text(rate: 12) == "12")
    }
}
