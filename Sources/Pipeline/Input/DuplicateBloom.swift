import ByteScan
#if canImport(Glibc)
import Glibc
#endif

/// The prescan's Bloom filter of duplicate-key hashes: which keys were (probably) seen before.
/// Cache-line blocked: a key's 8 bits lie in one 64-byte block, one bit in each of its 8 words, so
/// an insert is one cache miss however large the filter. At its largest, 20 MiB (17 bits a key at 10M
/// rows), about 1 key in 1,400 is a false hit there (each costs the reader an exact look-up, never a
/// wrong rejection): while it lives, the prescan's RSS is ~30 MiB plus the filter, under send's own
/// peak (24 MiB made the prescan the 10M-row run's peak, 53.2 MiB against 47.9 at 1M rows).
///
/// Owns its memory (zeroed pages mapped on first touch: pages a small campaign never touches cost
/// no RSS), unmapped in deinit, which is the prescan's end. Used by one thread, or by the two of a
/// prescan in halves, each inserting only into its own half of the blocks (`half(of:)`).
///
/// With `hugePages` (a campaign large enough to touch every page anyway) the filter asks for 2 MiB
/// pages: with 4 KiB ones nearly every insert also missed the TLB, a page walk on top of the cache
/// miss.
final class DuplicateBloom {
    private let words: UnsafeMutablePointer<UInt64>
    private let blocks: UInt64
    private let mapping: UnsafeMutableRawPointer
    private let mappedBytes: Int

    /// `bytes` is rounded down to whole 64-byte blocks, at least one.
    init(bytes: Int, hugePages: Bool = false) {
        let blocks = max(1, bytes / 64)
        self.blocks = UInt64(blocks)
        let huge = 2 << 20
        // Huge pages need 2 MiB alignment: map one more and use the aligned part.
        let hugePages = hugePages && blocks * 64 >= huge
        mappedBytes = blocks * 64 + (hugePages ? huge : 0)
        guard let memory = mmap(nil, mappedBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              memory != MAP_FAILED else {
            fatalError("cannot allocate the \(blocks * 64)-byte duplicate-token filter")
        }
        mapping = memory
        if hugePages {
            let aligned = (Int(bitPattern: memory) + huge - 1) & ~(huge - 1)
            let start = UnsafeMutableRawPointer(bitPattern: aligned)!
            _ = madvise(start, blocks * 64, MADV_HUGEPAGE)
            words = start.assumingMemoryBound(to: UInt64.self)
        } else {
            words = memory.assumingMemoryBound(to: UInt64.self)
        }
    }

    deinit { munmap(mapping, mappedBytes) }

    /// The block of the key's bits: from the low 32 bits of the hash, scaled to the block count
    /// (no division).
    @inline(__always)
    private func block(_ hash: UInt64) -> UnsafeMutablePointer<UInt64> {
        words + Int(truncatingIfNeeded: ((hash & 0xFFFF_FFFF) &* blocks) >> 32) &* 8
    }

    /// Which half of the blocks holds the key's (0 or 1): the one thread that inserts it when two
    /// share the filter, so that no block is ever written by both.
    @inline(__always)
    func half(of hash: UInt64) -> Int {
        ((hash & 0xFFFF_FFFF) &* blocks) >> 32 >= blocks >> 1 ? 1 : 0
    }

    /// Starts fetching the key's block, so that an `insert` of it a few rows later finds it in cache.
    @inline(__always)
    func prefetch(_ hash: UInt64) {
        CachePrefetch.forWriting(block(hash))
    }

    /// Sets the key's bits; true when all were set already (the key was probably inserted before).
    /// No branch per word: each word is ORed and written back whatever it held (the block is in
    /// cache, `prefetch`), and a missing bit is noticed from all eight at once.
    @inline(__always)
    func insert(_ hash: UInt64) -> Bool {
        // The bits from the rest of the hash, mixed again.
        let block = block(hash)
        let bits = DuplicateKeyHash.finish(hash >> 16)
        var missing: UInt64 = 0
        for word in 0..<8 {
            let bit = UInt64(1) &<< ((bits &>> UInt64(word &* 6)) & 63)
            let old = block[word]
            missing |= bit & ~old
            block[word] = old | bit
        }
        return missing == 0
    }
}
