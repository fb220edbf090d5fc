#if canImport(Glibc)
import Glibc
#endif

/// A TLS session's bytes waiting for `SSL_write`, in storage of its own: appending is a capacity
/// check and a memcpy. (As an `[UInt8]`, each of nghttp2's chunks, two per request, went through
/// `Array.append(contentsOf:)`, ~75 instructions a call beyond the copy.) Sent bytes are dropped
/// from the front once everything went, or once they dominate (`compact`). Owned by its session's
/// thread.
final class TLSOutputQueue {
    @exclusivity(unchecked) private var storage: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var capacity: Int
    /// Bytes `start..<end` wait to be sent.
    @exclusivity(unchecked) private(set) var start = 0
    @exclusivity(unchecked) private(set) var end = 0
    /// Where `append(producing:)` lets a producer write (kept for its capacity).
    @exclusivity(unchecked) private var scratch: [UInt8] = []

    init(capacity: Int = 16 * 1024) {
        self.capacity = capacity
        storage = .allocate(capacity: capacity)
    }

    deinit { storage.deallocate() }

    var pendingCount: Int { end - start }

    /// The first unsent byte.
    var unsent: UnsafePointer<UInt8> { UnsafePointer(storage + start) }

    @inline(__always)
    func append(_ bytes: UnsafeRawPointer, count: Int) {
        if capacity - end < count { makeRoom(count) }
        memcpy(storage + end, bytes, count)
        end &+= count
    }

    /// Appends an HTTP/2 frame header (9 bytes) with two moves instead of a memcpy call.
    @inline(__always)
    func appendFrameHeader(_ header: UnsafePointer<UInt8>) {
        if capacity - end < 9 { makeRoom(9) }
        let source = UnsafeRawPointer(header), target = UnsafeMutableRawPointer(storage + end)
        target.storeBytes(of: source.loadUnaligned(as: UInt64.self), as: UInt64.self)
        target.storeBytes(of: source.load(fromByteOffset: 8, as: UInt8.self), toByteOffset: 8, as: UInt8.self)
        end &+= 9
    }

    /// Lets a producer append to an array, then queues what it appended.
    func append<Result, Failure: Error>(producing produce: (inout [UInt8]) throws(Failure) -> Result) throws(Failure) -> Result {
        scratch.removeAll(keepingCapacity: true)
        defer { scratch.withUnsafeBytes { if let base = $0.baseAddress { append(base, count: $0.count) } } }
        return try produce(&scratch)
    }

    /// `count` bytes went out.
    func sent(_ count: Int) {
        start += count
        if start == end {
            start = 0
            end = 0
        }
    }

    /// Drops the sent prefix once it dominates, so a connection that never fully drains does not
    /// grow without bound. (The retry after a would-block may then see the bytes at a new
    /// address; SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER allows that.)
    func compact() {
        guard start >= 256 * 1024, start * 2 >= end else { return }
        slideDown()
    }

    private func slideDown() {
        memmove(storage, storage + start, end - start)
        end -= start
        start = 0
    }

    private func makeRoom(_ count: Int) {
        if start > 0 { slideDown() }
        guard capacity - end < count else { return }
        let larger = max(capacity * 2, end + count)
        let new = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        new.update(from: storage, count: end)
        storage.deallocate()
        storage = new
        capacity = larger
    }
}
