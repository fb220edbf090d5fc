import CLinux

/// Starting a cache line's load ahead of a write that will need it: Swift has no prefetch of its
/// own. For a table whose writes land on random lines (the duplicate filter): a few rows after the
/// prefetch the line is in cache, and the write no longer stalls on the miss.
public enum CachePrefetch {
    /// Starts loading the cache line at `address` for writing, without waiting for it.
    @inlinable @inline(__always)
    public static func forWriting(_ address: UnsafeRawPointer) {
        apnsbulk_prefetch_for_write(address)
    }
}
