import CZstd
#if canImport(Glibc)
import Glibc
#endif

/// Compresses appended bytes and writes one complete zstd frame per `flush()`, each frame with one
/// `write()`: after a crash every complete frame of the file still decodes.
/// Owned by one thread (not Sendable).
public final class ZstdFrameWriter {
    /// The file being written, for error messages.
    public let path: String
    private let context: OpaquePointer
    private let descriptor: Int32
    /// The next frame's uncompressed bytes: memory of our own rather than an array, so that a line
    /// can be written straight into it (`appendInPlace`) with no uniqueness or capacity check per
    /// piece and no copy. Freed in deinit.
    @exclusivity(unchecked) private var pending: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var pendingCapacity = 1 << 16
    @exclusivity(unchecked) private var pendingCount = 0
    /// What `withAppendedBytes` hands its caller to append to.
    @exclusivity(unchecked) private var scratch: [UInt8] = []
    @exclusivity(unchecked) private var frame: [UInt8] = []
    @exclusivity(unchecked) private var closed = false
    /// Complete frames written so far.
    @exclusivity(unchecked) public private(set) var framesWritten = 0
    /// Compressed bytes written so far.
    @exclusivity(unchecked) public private(set) var bytesWritten = 0

    /// Creates (or truncates) `path`; with `appending`, adds frames after what the file holds
    /// (a resumed result log). `hashLog`, when given, overrides the level's match-finder table
    /// size (log2 of its entries). `targetLength`, when given, is the fast strategy's acceleration:
    /// the match finder skips ahead faster after a miss, and literals stay Huffman-coded (zstd would
    /// otherwise store them raw once it is set; hex tokens and ids would then take twice the room).
    /// `checksum: false` leaves out each frame's content checksum (XXH64 over every byte written): a
    /// cut frame is still detected (it lacks its last block), only damage inside a complete frame
    /// would go unnoticed by the checksum.
    public init(path: String, level: Int32 = 3, hashLog: Int32? = nil, targetLength: Int32? = nil,
                checksum: Bool = true, appending: Bool = false) throws(ZstdWriteError) {
        guard let context = ZSTD_createCCtx() else {
            throw .compress(path: path, detail: "out of memory creating a zstd context")
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (appending ? O_APPEND : O_TRUNC), 0o644)
        guard descriptor >= 0 else {
            let code = errno
            ZSTD_freeCCtx(context)
            throw .open(path: path, errno: code)
        }
        ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level)
        ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, checksum ? 1 : 0)
        if let hashLog { ZSTD_CCtx_setParameter(context, ZSTD_c_hashLog, hashLog) }
        if let targetLength {
            ZSTD_CCtx_setParameter(context, ZSTD_c_targetLength, targetLength)
            // ZSTD_c_literalCompressionMode = ZSTD_ps_enable. Named by its reserved stable slot: the
            // shim keeps zstd's experimental declarations out. A zstd without it refuses the call and
            // writes raw literals: larger frames, equally valid.
            ZSTD_CCtx_setParameter(context, ZSTD_c_experimentalParam5, 1)
        }
        self.path = path
        self.context = context
        self.descriptor = descriptor
        pending = .allocate(capacity: pendingCapacity)
    }

    deinit {
        if !closed { _ = Glibc.close(descriptor) }
        ZSTD_freeCCtx(context)
        pending.deallocate()
    }

    /// Uncompressed bytes waiting for the next frame. (A getter, not the stored property: another
    /// module reading a stored property of a class pays a dynamic exclusivity check for it.)
    public var pendingByteCount: Int { pendingCount }

    /// Adds bytes to the next frame; nothing is written before `flush()`.
    public func append(_ bytes: some Sequence<UInt8>) {
        if bytes.withContiguousStorageIfAvailable({ appendBuffer($0) }) == nil {
            withAppendedBytes { $0.append(contentsOf: bytes) }
        }
    }

    /// Lets a caller encode into an empty array whose bytes then join the next frame.
    public func withAppendedBytes<R>(_ body: (inout [UInt8]) throws -> R) rethrows -> R {
        scratch.removeAll(keepingCapacity: true)
        let result = try body(&scratch)
        scratch.withUnsafeBufferPointer { appendBuffer($0) }
        return result
    }

    /// Lets a caller write up to `maximumCount` bytes straight into the next frame: `body` gets that
    /// much room and returns how many bytes it wrote there (0 to add nothing).
    public func appendInPlace(maximumCount: Int, _ body: (UnsafeMutableBufferPointer<UInt8>) -> Int) {
        reserve(maximumCount)
        let written = body(UnsafeMutableBufferPointer(start: pending + pendingCount, count: maximumCount))
        precondition(written >= 0 && written <= maximumCount, "ZstdFrameWriter: wrote more than reserved")
        pendingCount += written
    }

    private func appendBuffer(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        reserve(bytes.count)
        (pending + pendingCount).initialize(from: source, count: bytes.count)
        pendingCount += bytes.count
    }

    /// Room for `count` more bytes, the memory doubled as often as needed.
    @inline(__always)
    private func reserve(_ count: Int) {
        guard pendingCapacity - pendingCount < count else { return }
        var capacity = pendingCapacity
        while capacity - pendingCount < count { capacity *= 2 }
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        grown.initialize(from: pending, count: pendingCount)
        pending.deallocate()
        pending = grown
        pendingCapacity = capacity
    }

    /// Compresses everything appended since the last flush into one frame and writes it with one
    /// `write()`. Does nothing when nothing is pending.
    public func flush() throws(ZstdWriteError) {
        precondition(!closed, "flush after close")
        guard pendingCount > 0 else { return }
        let bound = ZSTD_compressBound(pendingCount)
        if frame.count < bound { frame = [UInt8](repeating: 0, count: bound) }
        let produced = try compressPending()
        try writeAll(count: produced)
        framesWritten += 1
        bytesWritten += produced
        pendingCount = 0
    }

    private func compressPending() throws(ZstdWriteError) -> Int {
        let capacity = frame.count
        var input = ZSTD_inBuffer(src: UnsafeRawPointer(pending), size: pendingCount, pos: 0)
        let result: Result<Int, ZstdWriteError> = frame.withUnsafeMutableBytes { target in
            var output = ZSTD_outBuffer(dst: target.baseAddress, size: capacity, pos: 0)
            while true {
                let remaining = ZSTD_compressStream2(context, &output, &input, ZSTD_e_end)
                if ZSTD_isError(remaining) != 0 {
                    return .failure(.compress(path: path, detail: String(cString: ZSTD_getErrorName(remaining))))
                }
                if remaining == 0 { return .success(output.pos) }
                // The output is sized by ZSTD_compressBound, so this only happens if zstd lied.
                if output.pos == output.size {
                    return .failure(.compress(path: path, detail: "frame larger than ZSTD_compressBound"))
                }
            }
        }
        return try result.get()
    }

    private func writeAll(count: Int) throws(ZstdWriteError) {
        var offset = 0
        while offset < count {
            let written = frame.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw .write(path: path, errno: errno)
            }
            offset += written
        }
    }

    /// Flushes what is pending and closes the file.
    public func close() throws(ZstdWriteError) {
        guard !closed else { return }
        try flush()
        closed = true
        if Glibc.close(descriptor) != 0 { throw .write(path: path, errno: errno) }
    }
}
