#if canImport(Glibc)
import Glibc
#endif

/// The prescan's Bloom filter of duplicate-key hashes: which keys were (probably) seen before.
/// Cache-line blocked: a key's 8 bits lie in one 64-byte block, one bit in each of its 8 words, so
/// an insert is one cache miss however large the filter. 32 MiB holds 10M keys with about 1 in
/// 20,000 false hits (each one costs the reader an exact look-up, never a wrong rejection).
///
/// Owns its memory (calloc: pages a small campaign never touches cost no RSS), freed in deinit,
/// which is the prescan's end. Used by one thread.
final class DuplicateBloom {
    private let words: UnsafeMutablePointer<UInt64>
    private let blockMask: Int

    /// `bytes` is rounded down to a power of two, at least one 64-byte block.
    init(bytes: Int) {
        var blocks = 1
        while blocks * 2 * 64 <= bytes { blocks *= 2 }
        blockMask = blocks - 1
        guard let memory = calloc(blocks * 8, MemoryLayout<UInt64>.stride) else {
            fatalError("cannot allocate the \(blocks * 64)-byte duplicate-token filter")
        }
        words = memory.assumingMemoryBound(to: UInt64.self)
    }

    deinit { free(words) }

    /// Sets the key's bits; true when all were set already (the key was probably inserted before).
    @inline(__always)
    func insert(_ hash: UInt64) -> Bool {
        let block = words + (Int(truncatingIfNeeded: hash) & blockMask) &* 8
        // The block took at most the low 32 bits; the bits come from the rest, mixed again so
        // that a small filter's unused block bits are not wasted.
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
