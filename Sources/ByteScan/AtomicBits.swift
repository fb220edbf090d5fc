import CLinux

/// A bitmap in memory that several threads write, some of them in the same word, and that may live
/// in a file mapping (where Swift's `Atomic` cannot): bit b is bit b % 64 of word b / 64, each set
/// or cleared by one atomic read-modify-write. Relaxed: a bit orders nothing else. The caller owns
/// the memory and keeps it mapped while any thread writes.
public struct AtomicBits: @unchecked Sendable {  // a pointer only; every write to it is atomic
    @usableFromInline let words: UnsafeMutablePointer<UInt64>

    /// The bitmap whose first word is at `words`.
    public init(words: UnsafeMutablePointer<UInt64>) {
        self.words = words
    }

    /// Sets bit `bit` (an atomic OR).
    @inlinable @inline(__always)
    public func set(_ bit: UInt64) {
        apnsbulk_set_bit(words, bit)
    }

    /// Clears bit `bit` (an atomic AND).
    @inlinable @inline(__always)
    public func clear(_ bit: UInt64) {
        apnsbulk_clear_bit(words, bit)
    }
}
