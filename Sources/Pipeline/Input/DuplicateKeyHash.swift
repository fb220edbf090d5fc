import ByteScan
import APNs

/// The 64-bit hash that stands for a row's duplicate key, (token in lower case, topic after the
/// run's `--topic` fills an empty one): the prescan's Bloom filter, the suspects and the stream
/// mode's table all hold it. The prescan (bytes it captured itself) and the reader (the decoded
/// row's fields) must get the same value for the same key, so both go through these functions.
///
/// Eight bytes a step (multiply and shift) and a splitmix64 finish: the reader pays this for every
/// row it sends (a 64-digit token is 8 steps), so it is a mixing hash, not a cryptographic one.
/// The token and the topic are hashed apart and combined, so the run's topic is hashed once.
enum DuplicateKeyHash {
    /// The token's hash; hex letters are folded to lower case (`| 0x20` leaves digits alone).
    static func token(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        hash(bytes, fold: 0x2020_2020_2020_2020, seed: 0x243F_6A88_85A3_08D3)
    }

    /// The topic's hash, its bytes as they are.
    static func topic(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        hash(bytes, fold: 0, seed: 0x1319_8A2E_0370_7344)
    }

    /// The key's hash; never 0, which the suspects' table keeps for an empty slot.
    @inline(__always)
    static func combine(token: UInt64, topic: UInt64) -> UInt64 {
        max(finish(token ^ ((topic << 31) | (topic >> 33)) &* 0x9E37_79B9_7F4A_7C15), 1)
    }

    @inline(__always)
    private static func hash(_ bytes: UnsafeRawBufferPointer, fold: UInt64, seed: UInt64) -> UInt64 {
        let count = bytes.count
        var state = seed ^ (UInt64(truncatingIfNeeded: count) &* 0x9E37_79B9_7F4A_7C15)
        guard let base = bytes.baseAddress else { return finish(state) }
        var index = 0
        while count &- index >= 8 {
            state = (state ^ (SWAR.load(base + index) | fold)) &* 0xBF58_476D_1CE4_E5B9
            state ^= state >> 31
            index &+= 8
        }
        if index < count {
            var word: UInt64 = 0
            var shift: UInt64 = 0
            while index < count {
                word |= UInt64(base.load(fromByteOffset: index, as: UInt8.self) | UInt8(truncatingIfNeeded: fold)) << shift
                shift &+= 8
                index &+= 1
            }
            state = (state ^ word) &* 0xBF58_476D_1CE4_E5B9
            state ^= state >> 31
        }
        return finish(state)
    }

    /// splitmix64's finalizer: every input bit reaches every output bit.
    @inline(__always)
    static func finish(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
