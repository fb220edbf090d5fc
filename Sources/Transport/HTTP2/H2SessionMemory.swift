import CNGHTTP2
#if canImport(Glibc)
import Glibc
#endif

/// nghttp2's memory for one client session (`nghttp2_session_client_new3`): blocks up to 1 KiB
/// come from free lists by 16-byte size class, refilled a slab at a time, and go back to them.
///
/// nghttp2 makes about six allocations per request (stream, outbound item, header copy, received
/// header buffers, ...) and frees them when the stream ends; with hundreds of streams in flight
/// glibc's small per-thread cache overflows and each call takes its slow path (~1.7k instructions
/// per request in callgrind, malloc and free together). Here a call is a list push or pop.
///
/// Used only on its session's thread; it must outlive the nghttp2 session (the session owns it
/// and frees the nghttp2 session first). Slabs go back to the system when it is deinitialized:
/// memory stays at the session's peak, which the stream limit bounds.
final class H2SessionMemory {
    private static let classBytes = 16
    private static let classCount = 64
    /// In front of every block: its size class (0: a large block from malloc) and, for a large
    /// block, its size. 16 bytes keep the payload 16-byte aligned, as malloc's is.
    private static let headerBytes = 16
    private static let slabBytes = 16 * 1024

    /// The whole state, where nghttp2's C callbacks reach it without reference counting: entry
    /// `c` (1...classCount) heads class c's free list, entry 0 the list of slabs to free.
    private let lists: UnsafeMutablePointer<UnsafeMutableRawPointer?>

    init() {
        lists = .allocate(capacity: Self.classCount + 1)
        lists.initialize(repeating: nil, count: Self.classCount + 1)
    }

    deinit {
        var slab = lists[0]
        while let current = slab {
            slab = current.load(as: UnsafeMutableRawPointer?.self)
            free(current)
        }
        lists.deallocate()
    }

    /// The allocator to hand nghttp2; valid while this object lives.
    var nghttp2Memory: nghttp2_mem {
        nghttp2_mem(mem_user_data: UnsafeMutableRawPointer(lists),
                    malloc: { size, state in H2SessionMemory.allocate(size, state!) },
                    free: { pointer, state in H2SessionMemory.release(pointer, state!) },
                    calloc: { count, size, state in H2SessionMemory.allocateZeroed(count, size, state!) },
                    realloc: { pointer, size, state in H2SessionMemory.reallocate(pointer, size, state!) })
    }

    private typealias Lists = UnsafeMutablePointer<UnsafeMutableRawPointer?>

    @inline(__always)
    private static func lists(_ state: UnsafeMutableRawPointer) -> Lists {
        state.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
    }

    static func allocate(_ size: Int, _ state: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? {
        let sizeClass = Swift.max(1, (size + classBytes - 1) / classBytes)
        guard sizeClass <= classCount else {
            guard let block = malloc(headerBytes + size) else { return nil }
            block.storeBytes(of: 0, as: Int.self)
            block.storeBytes(of: size, toByteOffset: 8, as: Int.self)
            return block + headerBytes
        }
        let lists = lists(state)
        if lists[sizeClass] == nil && !refill(sizeClass, lists) { return nil }
        let block = lists[sizeClass]!
        // A free block keeps the next one's address where its payload goes.
        lists[sizeClass] = block.load(fromByteOffset: headerBytes, as: UnsafeMutableRawPointer?.self)
        return block + headerBytes
    }

    static func release(_ pointer: UnsafeMutableRawPointer?, _ state: UnsafeMutableRawPointer) {
        guard let pointer else { return }
        let block = pointer - headerBytes
        let sizeClass = block.load(as: Int.self)
        guard sizeClass > 0 else {
            free(block)
            return
        }
        let lists = lists(state)
        pointer.storeBytes(of: lists[sizeClass], as: UnsafeMutableRawPointer?.self)
        lists[sizeClass] = block
    }

    static func allocateZeroed(_ count: Int, _ size: Int, _ state: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? {
        let (bytes, overflow) = count.multipliedReportingOverflow(by: size)
        guard !overflow, let pointer = allocate(bytes, state) else { return nil }
        memset(pointer, 0, bytes)
        return pointer
    }

    static func reallocate(_ pointer: UnsafeMutableRawPointer?, _ size: Int,
                           _ state: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? {
        guard let pointer else { return allocate(size, state) }
        let capacity = capacity(of: pointer)
        if size <= capacity { return pointer }
        guard let larger = allocate(size, state) else { return nil }
        larger.copyMemory(from: pointer, byteCount: capacity)
        release(pointer, state)
        return larger
    }

    /// The bytes a block handed out by `allocate` can hold.
    static func capacity(of pointer: UnsafeMutableRawPointer) -> Int {
        let block = pointer - headerBytes
        let sizeClass = block.load(as: Int.self)
        return sizeClass > 0 ? sizeClass * classBytes : block.load(fromByteOffset: 8, as: Int.self)
    }

    /// Carves a new slab into blocks of `sizeClass`; the slab's first 16 bytes link it to the others.
    private static func refill(_ sizeClass: Int, _ lists: Lists) -> Bool {
        let blockBytes = headerBytes + sizeClass * classBytes
        let count = Swift.max(4, (slabBytes - headerBytes) / blockBytes)
        guard let slab = malloc(headerBytes + count * blockBytes) else { return false }
        slab.storeBytes(of: lists[0], as: UnsafeMutableRawPointer?.self)
        lists[0] = slab
        var next: UnsafeMutableRawPointer? = lists[sizeClass]
        for index in stride(from: count - 1, through: 0, by: -1) {
            let block = slab + headerBytes + index * blockBytes
            block.storeBytes(of: sizeClass, as: Int.self)
            block.storeBytes(of: next, toByteOffset: headerBytes, as: UnsafeMutableRawPointer?.self)
            next = block
        }
        lists[sizeClass] = next
        return true
    }
}
