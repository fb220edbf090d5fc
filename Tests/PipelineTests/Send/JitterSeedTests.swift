import Testing
import Transport
@testable import Pipeline

/// Retry and reconnect jitter: seeded from the system's random source for each run, so the
/// processes, shards and pods of a campaign do not back off in step; a test can still fix it.
@Suite struct JitterSeedTests {
    func configuration() throws -> CampaignConfiguration {
        CampaignConfiguration(inputPath: "c.csv", authentication: .certificate, endpoints: [.production],
                              tls: try TLSContext.client(), outputDirectory: "out")
    }

    /// The first waits a backoff seeded with `seed` draws (the retry and reconnect schedules
    /// are seeded from the configuration's seed).
    func waits(seed: UInt64) -> [Int] {
        var backoff = Backoff(baseMilliseconds: 500, capMilliseconds: 60_000, seed: seed)
        return (1...8).map { backoff.delayMilliseconds(attempt: $0) }
    }

    @Test func everyRunDrawsItsOwnJitterSeed() throws {
        let seeds = try (0..<8).map { _ in try configuration().seed }
        #expect(Set(seeds).count == seeds.count, "\(seeds)")
        #expect(waits(seed: seeds[0]) != waits(seed: seeds[1]))
    }

    @Test func anInjectedSeedGivesTheSameJitterEveryTime() throws {
        var one = try configuration()
        var two = try configuration()
        one.seed = 42
        two.seed = 42
        #expect(waits(seed: one.seed) == waits(seed: two.seed))
    }
}
