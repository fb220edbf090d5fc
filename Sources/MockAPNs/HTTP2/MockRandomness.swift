// Randomness in the mock: the reproducible fault draws and the free-running stream.

/// Deterministic draws for the random faults: a function of (seed, device token, attempt), so a
/// run's faults do not depend on the order requests arrive in.
enum MockFaultDraw {
    /// A number in [0, 1).
    static func uniform(seed: UInt64, token: String, attempt: UInt32, salt: UInt64) -> Double {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ seed
        for byte in token.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        hash = mix(hash ^ (UInt64(attempt) << 32) ^ salt &* 0x9e37_79b9_7f4a_7c15)
        return Double(hash >> 11) * 0x1.0p-53
    }

    /// SplitMix64's finaliser.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9e37_79b9_7f4a_7c15
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

/// The mock's own random stream, for what no run needs to reproduce (the `apns-id`s it makes, the
/// latency jitter): seeded from `--seed` and the start time, so two servers do not make the same ids.
struct MockRandom {
    private var state: UInt64

    init(seed: UInt64) { state = MockFaultDraw.mix(seed) }

    mutating func next() -> UInt64 {
        state = MockFaultDraw.mix(state)
        return state
    }
}
