/// Exponential backoff with jitter, capped: the delay before retry `n` (1-based) is drawn from
/// [d/2, d] where d = min(cap, base × 2^(n−1)). Half of the delay is fixed, so a retry is never
/// immediate (APNs treats rapid reconnects as an attack, and a 429'd token must wait); the other
/// half is random, so many clients that failed together do not retry together.
///
/// A value type with its own random generator: each thread keeps its own copy.
public struct Backoff: Sendable {
    /// The first retry's ceiling; each later retry's doubles, up to `capMilliseconds`.
    public var baseMilliseconds: Int
    /// The longest a delay can be, however many retries came before.
    public var capMilliseconds: Int
    private var random: SplitMix64

    /// A backoff from `baseMilliseconds` up to `capMilliseconds`; `seed` makes the jitter repeatable.
    public init(baseMilliseconds: Int, capMilliseconds: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) {
        precondition(baseMilliseconds > 0 && capMilliseconds >= baseMilliseconds,
                     "backoff needs 0 < base <= cap")
        self.baseMilliseconds = baseMilliseconds
        self.capMilliseconds = capMilliseconds
        self.random = SplitMix64(seed: seed)
    }

    /// The ceiling of the delay before retry `attempt` (1-based), before jitter.
    public func ceilingMilliseconds(attempt: Int) -> Int {
        let doublings = max(0, min(attempt - 1, 30))
        let (product, overflow) = baseMilliseconds.multipliedReportingOverflow(by: 1 << doublings)
        return overflow ? capMilliseconds : min(capMilliseconds, product)
    }

    /// The delay before retry `attempt` (1-based), in milliseconds: within [ceiling/2, ceiling].
    public mutating func delayMilliseconds(attempt: Int) -> Int {
        let ceiling = ceilingMilliseconds(attempt: attempt)
        let half = ceiling / 2
        let spread = UInt64(ceiling - half + 1)
        return half + Int(random.next() % spread)
    }
}

/// A small, fast, seedable generator (Steele, Lea, Flood 2014); not for secrets.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`: runs and tests repeat.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
