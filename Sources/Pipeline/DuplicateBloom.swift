#if canImport(Glibc)
import Glibc
#endif

/// The prescan's Bloom filter of duplicate-key hashes: which keys were (probably) seen before.
/// Cache-line blocked: a key's 8 bits lie in one 64-byte block, one bit in each of its 8 words, so
/// an insert is one cache miss however large the filter. 24 MiB (20 bits a key at 10M rows) gives
/// about 1 false hit in 5,000 keys there (each costs the reader an exact look-up, never a wrong
/// rejection): while it lives, the prescan's RSS is ~30 MiB plus the filter, under send's own peak.
///
/// Owns its memory (calloc: pages a small campaign never touches cost no RSS), freed in deinit,
/// which is the prescan's end. Used by one thread.
final class DuplicateBloom {
    private let words: UnsafeMutablePointer<UInt64>
    private let blocks: UInt64

    /// `bytes` is rounded down to whole 64-byte blocks, at least one.
    init(bytes: Int) {
        let blocks = max(1, bytes / 64)
        self.blocks = UInt64(blocks)
        guard let memory = calloc(blocks * 8, MemoryLayout<UInt64>.stride) else {
            fatalError("cannot allocate the \(blocks * 64)-byte duplicate-token filter")
        }
        words = memory.assumingMemoryBound(to: UInt64.self)
    }

    deinit { free(words) }

    /// Sets the key's bits; true when all were set already (the key was probably inserted before).
    @inline(__always)
    func insert(_ hash: UInt64) -> Bool {
        // The block from the low 32 bits, scaled to the block count (no division); the bits from
        // the rest, mixed again.
        let block = words + Int(truncatingIfNeeded: ((hash & 0xFFFF_FFFF) &* blocks) >> 32) &* 8
        let bits = DuplicateKeyHash.finish(hash >> 16)
        var seen = true
        for word in 0..<8 {
            let bit = UInt64(1) << ((bits >> UInt64(word * 6)) & 63)
            if block[word] & bit == 0 {
                seen = false
                block[word] |= bit
            }
        }
        return seen
    }
}
