import ZstdFile
#if canImport(Glibc)
import Glibc
#endif

/// A campaign input read in chunks: a regular file, or a stream (`-` for stdin, a named pipe, a
/// character device) that can be read only once and may keep us waiting. Plain CSV, or zstd
/// recognised by its magic number on any input (a `.zst` name alone never decides).
///
/// A stream is opened without blocking (a FIFO's open() would otherwise wait, deaf to signals, for
/// a writer) and waited on with poll() in short slices, asking `shouldStop` between them, so that
/// SIGINT/SIGTERM end the wait within a slice even when no writer has come yet or the writer is
/// idle. A regular file is read with plain blocking reads, as before. Owned by one thread.
final class InputFile {
    static let standardInput = "-"
    /// How long one wait for stream input lasts before `shouldStop` is asked again.
    static let waitSliceMilliseconds: Int32 = 100
    static let zstdMagic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]

    /// The name errors use: the path, or "stdin" for `-`.
    let path: String
    private(set) var isStream = false
    private var descriptor: Int32 = -1
    private var zstd: ZstdStreamReader?
    /// A stream's first bytes, read to look for the magic number: handed out before anything else.
    private var sniffed: [UInt8] = []
    private let shouldStop: () -> Bool
    /// Why a stream's read failed; set once, and every later read fails with it.
    private var sourceError: InputFileError?
    private(set) var bytesRead = 0

    /// The name an input is called by in messages.
    static func displayName(_ path: String) -> String { path == standardInput ? "stdin (--input -)" : path }

    /// Whether `path` is a stream (stdin, a FIFO, a character device, a socket): read once, no
    /// prescan. Looks with stat(), which, unlike open(), never waits for a FIFO's writer.
    static func isStream(path: String) -> Bool {
        if path == standardInput { return true }
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        let kind = info.st_mode & S_IFMT
        return kind != S_IFREG && kind != S_IFDIR
    }

    init(path given: String, shouldStop: @escaping () -> Bool = { false }) throws(InputFileError) {
        let path = Self.displayName(given)
        self.path = path
        self.shouldStop = shouldStop
        // stdin is duplicated, never made non-blocking: its open file is shared with the caller.
        let fd = given == Self.standardInput
            ? fcntl(0, F_DUPFD_CLOEXEC, 0) : open(given, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw Self.openError(path: path, errno: errno) }
        descriptor = fd
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Self.openError(path: path, errno: errno) }
        let kind = info.st_mode & S_IFMT
        if kind == S_IFDIR { throw .unreadable(path: path, detail: "it is a directory") }
        isStream = kind != S_IFREG
        if !isStream && info.st_size == 0 { throw .empty(path: path) }

        var magic = [UInt8](repeating: 0, count: 4)
        var got = 0
        if isStream {
            while got < 4 {
                let count = magic.withUnsafeMutableBytes { waitAndRead(into: UnsafeMutableRawBufferPointer(rebasing: $0[got...])) }
                if let sourceError { throw sourceError }
                if count == 0 { break }
                got += count
            }
            sniffed = Array(magic[0..<got])
        } else {
            got = max(0, pread(fd, &magic, 4, 0))
        }
        if got >= 2 && magic[0] == 0x1F && magic[1] == 0x8B { throw .gzip(path: path) }
        let isZstd = got == 4 ? magic == Self.zstdMagic : got > 0 && given.hasSuffix(".zst")
        if got == 4 && !isZstd && given.hasSuffix(".zst") {
            throw .corruptZstd(path: path, detail: "the file does not start with the zstd magic number")
        }
        guard isZstd else { return }
        do {
            if isStream {
                zstd = try ZstdStreamReader(name: path) { [unowned self] buffer in readCompressed(into: buffer) }
            } else {
                _ = close(descriptor)
                descriptor = -1
                zstd = try ZstdStreamReader(path: given)
            }
        } catch {
            throw Self.map(error)
        }
    }

    deinit { if descriptor >= 0 { _ = close(descriptor) } }

    /// Reads go on from `offset` of a plain, uncompressed regular file (the prescan's second half,
    /// `PrescanHalves`); false for any other input, or when the seek fails.
    func seek(to offset: Int) -> Bool {
        guard !isStream, zstd == nil, descriptor >= 0 else { return false }
        return lseek(descriptor, off_t(offset), SEEK_SET) == off_t(offset)
    }

    /// Whether the input is zstd-compressed (read decompressed).
    var isCompressed: Bool { zstd != nil }

    /// Reads on to the end of the file, `chunkSize` bytes at a time, handing each chunk to `scan`;
    /// false as soon as `scan` returns false (the rest is left unread).
    func scanToEnd(chunkSize: Int, _ scan: (UnsafeRawBufferPointer) -> Bool) throws(InputFileError) -> Bool {
        var chunk: [UInt8] = []
        chunk.reserveCapacity(chunkSize)
        while try read(into: &chunk, limit: chunkSize) {
            guard chunk.withUnsafeBytes(scan) else { return false }
        }
        return true
    }

    /// Replaces `buffer`'s contents with up to `limit` bytes; returns false at the end of the file.
    /// Throws `.interrupted` when a stream's wait was cut short by `shouldStop`.
    func read(into buffer: inout [UInt8], limit: Int) throws(InputFileError) -> Bool {
        buffer.removeAll(keepingCapacity: true)
        if let zstd {
            while buffer.count < limit {
                let status: ZstdReadStatus
                do {
                    status = try zstd.read(appendingTo: &buffer, limit: limit - buffer.count)
                } catch {
                    if let sourceError { throw sourceError }
                    throw Self.map(error)
                }
                if status == .end { break }
            }
        } else if isStream {
            if !sniffed.isEmpty {
                buffer.append(contentsOf: sniffed)
                sniffed = []
            } else {
                buffer = [UInt8](unsafeUninitializedCapacity: limit) { bytes, count in
                    count = max(0, waitAndRead(into: UnsafeMutableRawBufferPointer(bytes)))
                }
                if let sourceError { throw sourceError }
            }
        } else {
            var failure: Int32 = 0
            buffer = [UInt8](unsafeUninitializedCapacity: limit) { bytes, count in
                while true {
                    let got = Glibc.read(descriptor, bytes.baseAddress!, limit)
                    if got < 0 && errno == EINTR { continue }
                    if got < 0 { failure = errno }
                    count = max(got, 0)
                    return
                }
            }
            guard failure == 0 else { throw .unreadable(path: path, detail: String(cString: strerror(failure))) }
        }
        bytesRead += buffer.count
        return !buffer.isEmpty
    }

    /// The zstd reader's source on a stream: the sniffed bytes, then the stream.
    private func readCompressed(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if !sniffed.isEmpty {
            let count = min(sniffed.count, buffer.count)
            sniffed.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            sniffed.removeFirst(count)
            return count
        }
        let got = waitAndRead(into: buffer)
        if got < 0 { errno = EIO }
        return got
    }

    /// One read of a stream, waiting for data in slices: bytes read, 0 at the end of the stream,
    /// or -1 with `sourceError` set (typed errors do not cross the buffer closures).
    private func waitAndRead(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if sourceError != nil { return -1 }
        while true {
            if shouldStop() {
                sourceError = .interrupted(path: path)
                return -1
            }
            var wait = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&wait, 1, Self.waitSliceMilliseconds)
            if ready < 0 && errno != EINTR {
                sourceError = .unreadable(path: path, detail: String(cString: strerror(errno)))
                return -1
            }
            guard ready > 0 else { continue }
            let got = Glibc.read(descriptor, buffer.baseAddress!, buffer.count)
            if got >= 0 { return got }
            if errno == EINTR || errno == EAGAIN { continue }
            sourceError = .unreadable(path: path, detail: String(cString: strerror(errno)))
            return -1
        }
    }

    private static func openError(path: String, errno code: Int32) -> InputFileError {
        if code == ENOENT { return .missing(path: path) }
        return .unreadable(path: path, detail: String(cString: strerror(code)))
    }

    private static func map(_ error: ZstdReadError) -> InputFileError {
        switch error {
        case .open(let path, let code): return openError(path: path, errno: code)
        case .read(let path, let code): return .unreadable(path: path, detail: String(cString: strerror(code)))
        case .truncated(let path, let frame, let cutBytes): return .truncatedZstd(path: path, frame: frame, cutBytes: cutBytes)
        case .corrupt(let path, _, let offset, let detail): return .corruptZstd(path: path, detail: "\(detail) at compressed byte \(offset)")
        }
    }
}
