import Testing
import Transport
@testable import Pipeline

/// Retry and reconnect jitter: seeded from the system's random source for each run, so the
/// processes, shards and pods of a campaign do not back off in step; a test can still fix it.
@Suite struct JitterSeedTests {
    func configuration(seed: UInt64? = nil) throws -> CampaignConfiguration {
        var configuration = CampaignConfiguration(inputPath: "c.csv", authentication: .certificate, endpoints: [.production],
                                                  tls: try TLSContext.client(), outputDirectory: "out")
        configuration.maxAttempts = 9
        if let seed { configuration.seed = seed }
        return configuration
    }

    /// The waits before a row's retries 2...9, as the policy a run's worker gets from the configuration
    /// draws them (a 503: retry later, on another connection).
    func retryWaits(_ configuration: CampaignConfiguration, worker: Int = 0) -> [Int] {
        var policy = RetryPolicy(for: configuration, worker: worker)
        return (1...8).map { attempt in
            guard case .retry(let delay, _) = policy.decide(.retryLater(.connection), attempts: attempt, expiration: 0,
                                                             nowMilliseconds: 0) else { return -1 }
            return delay
        }
    }

    /// The waits before a slot's reconnects after eight failed connections in a row, as the schedule a
    /// run's connection slot gets from the configuration draws them.
    func reconnectWaits(_ configuration: CampaignConfiguration, slot: Int = 0) -> [Duration] {
        var schedule = ReconnectSchedule(for: configuration, slot: slot)
        return (1...8).map { _ in schedule.connectionEnded(readyFor: nil) }
    }

    @Test func everyRunDrawsItsOwnJitterSeed() throws {
        let configurations = try (0..<8).map { _ in try configuration() }
        let seeds = configurations.map(\.seed)
        #expect(Set(seeds).count == seeds.count, "\(seeds)")
        #expect(retryWaits(configurations[0]) != retryWaits(configurations[1]))
        #expect(reconnectWaits(configurations[0]) != reconnectWaits(configurations[1]))
    }

    @Test func anInjectedSeedGivesTheSameJitterEveryTime() throws {
        let one = try configuration(seed: 42), two = try configuration(seed: 42), other = try configuration(seed: 43)
        #expect(retryWaits(one) == retryWaits(two))
        #expect(reconnectWaits(one) == reconnectWaits(two))
        // The waits follow the seed: another seed draws other waits (a seed ignored would draw the same).
        #expect(retryWaits(one) != retryWaits(other))
        #expect(reconnectWaits(one) != reconnectWaits(other))
        // Workers and slots of one run draw apart, so they do not retry or reconnect in step.
        #expect(retryWaits(one, worker: 0) != retryWaits(one, worker: 1))
        #expect(reconnectWaits(one, slot: 0) != reconnectWaits(one, slot: 1))
    }
}
