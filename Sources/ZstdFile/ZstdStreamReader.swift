import CZstd
#if canImport(Glibc)
import Glibc
#endif

/// Streaming decompression of a file of concatenated zstd frames in bounded memory
/// (`ZSTD_d_windowLogMax`, so a hostile `.zst` cannot make it allocate gigabytes).
/// Owned by one thread (not Sendable).
public final class ZstdStreamReader {
    /// The file being read, for error messages.
    public let path: String
    private let context: OpaquePointer
    private let descriptor: Int32
    /// Where compressed bytes come from when the caller reads them (a pipe it waits on itself):
    /// bytes read, 0 at the end, or -1 with errno set. Nil: `read(2)` on `descriptor`.
    private let source: ((UnsafeMutableRawBufferPointer) -> Int)?
    private var input: [UInt8]
    /// Decompressed bytes land here first, so callers' buffers need no zero-filling.
    private var scratch: [UInt8]
    private var inputCount = 0
    private var inputPosition = 0
    private var atEndOfFile = false
    private var inFrame = false
    private var lastResult = 0
    private var frameStart = 0
    /// Compressed bytes consumed so far.
    public private(set) var compressedOffset = 0
    /// Complete frames decoded so far.
    public private(set) var completeFrames = 0

    /// Opens `path`. `windowLogMax` caps the window a frame may ask for (log2 of its bytes: 27 is
    /// 128 MiB); `inputChunk` is how much compressed input one `read()` takes.
    public init(path: String, windowLogMax: Int32 = 27, inputChunk: Int = 128 * 1024) throws(ZstdReadError) {
        guard let context = ZSTD_createDCtx() else {
            throw .corrupt(path: path, frame: 1, offset: 0, detail: "out of memory creating a zstd context")
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            ZSTD_freeDCtx(context)
            throw .open(path: path, errno: code)
        }
        ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, windowLogMax)
        self.path = path
        self.context = context
        self.descriptor = descriptor
        self.source = nil
        self.input = [UInt8](repeating: 0, count: max(inputChunk, 4096))
        self.scratch = [UInt8](repeating: 0, count: ZSTD_DStreamOutSize())
    }

    /// Decompresses what `source` reads (e.g. a pipe, whose first bytes were already taken to look
    /// for the magic number); `name` is used in error messages.
    public init(name: String, windowLogMax: Int32 = 27, inputChunk: Int = 128 * 1024,
                source: @escaping (UnsafeMutableRawBufferPointer) -> Int) throws(ZstdReadError) {
        guard let context = ZSTD_createDCtx() else {
            throw .corrupt(path: name, frame: 1, offset: 0, detail: "out of memory creating a zstd context")
        }
        ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, windowLogMax)
        self.path = name
        self.context = context
        self.descriptor = -1
        self.source = source
        self.input = [UInt8](repeating: 0, count: max(inputChunk, 4096))
        self.scratch = [UInt8](repeating: 0, count: ZSTD_DStreamOutSize())
    }

    deinit {
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
        ZSTD_freeDCtx(context)
    }

    /// Appends up to `limit` decompressed bytes to `output`. Stops early at the end of a frame, so a
    /// caller can commit whole frames. Throws `.truncated` when the file ends inside a frame.
    public func read(appendingTo output: inout [UInt8], limit: Int) throws(ZstdReadError) -> ZstdReadStatus {
        precondition(limit > 0, "read limit must be positive")
        var produced = 0
        while produced < limit {
            if inputPosition == inputCount && !atEndOfFile { try refill() }
            let noInput = inputPosition == inputCount
            if noInput && !inFrame { return try finish() }
            let (result, written) = try decompressStep(capacity: min(limit - produced, scratch.count))
            output.append(contentsOf: scratch[0..<written])
            produced += written
            if result == 0 {
                inFrame = false
                completeFrames += 1
                frameStart = compressedOffset
                return .frameEnd
            }
            // At the end of the file with nothing more coming out: the last frame is cut.
            if noInput && written == 0 { return try finish() }
        }
        return .more
    }

    private func decompressStep(capacity: Int) throws(ZstdReadError) -> (Int, Int) {
        let inputStart = inputPosition
        let step: (result: Int, consumed: Int, written: Int) = input.withUnsafeBytes { source in
            scratch.withUnsafeMutableBytes { target in
                var inBuffer = ZSTD_inBuffer(src: source.baseAddress, size: inputCount, pos: inputStart)
                var outBuffer = ZSTD_outBuffer(dst: target.baseAddress, size: capacity, pos: 0)
                let result = ZSTD_decompressStream(context, &outBuffer, &inBuffer)
                return (result, inBuffer.pos - inputStart, outBuffer.pos)
            }
        }
        if ZSTD_isError(step.result) != 0 {
            throw .corrupt(path: path, frame: completeFrames + 1, offset: compressedOffset,
                           detail: String(cString: ZSTD_getErrorName(step.result)))
        }
        if step.consumed > 0 || step.written > 0 { inFrame = true }
        inputPosition += step.consumed
        compressedOffset += step.consumed
        lastResult = step.result
        return (step.result, step.written)
    }

    private func refill() throws(ZstdReadError) {
        inputPosition = 0
        inputCount = 0
        while true {
            let count = input.withUnsafeMutableBytes { buffer in
                source.map { $0(buffer) } ?? Glibc.read(descriptor, buffer.baseAddress!, buffer.count)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw .read(path: path, errno: errno)
            }
            if count == 0 { atEndOfFile = true }
            inputCount = count
            return
        }
    }

    private func finish() throws(ZstdReadError) -> ZstdReadStatus {
        if inFrame && lastResult != 0 {
            throw .truncated(path: path, frame: completeFrames + 1, cutBytes: compressedOffset - frameStart)
        }
        return .end
    }
}
