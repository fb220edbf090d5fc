import ZstdFile
#if canImport(Glibc)
import Glibc
#endif

/// A campaign file read in chunks: plain CSV, or zstd-compressed (recognised by its magic number,
/// or by a `.zst` name when the input is not seekable, e.g. a pipe). Owned by one thread.
final class InputFile {
    let path: String
    private var descriptor: Int32 = -1
    private var zstd: ZstdStreamReader?
    private(set) var bytesRead = 0

    init(path: String) throws(InputFileError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.openError(path: path, errno: errno) }
        var info = stat()
        if fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
            _ = close(fd)
            throw .unreadable(path: path, detail: "it is a directory")
        }
        let regular = (info.st_mode & S_IFMT) == S_IFREG
        if regular && info.st_size == 0 {
            _ = close(fd)
            throw .empty(path: path)
        }
        var magic = [UInt8](repeating: 0, count: 4)
        let got = regular ? pread(fd, &magic, 4, 0) : 0
        let isZstd = got == 4 ? magic == [0x28, 0xB5, 0x2F, 0xFD] : path.hasSuffix(".zst")
        if got >= 2 && magic[0] == 0x1F && magic[1] == 0x8B {
            _ = close(fd)
            throw .gzip(path: path)
        }
        if got == 4 && !isZstd && path.hasSuffix(".zst") {
            _ = close(fd)
            throw .corruptZstd(path: path, detail: "the file does not start with the zstd magic number")
        }
        if isZstd {
            _ = close(fd)
            do { zstd = try ZstdStreamReader(path: path) } catch { throw Self.map(error) }
        } else {
            descriptor = fd
        }
    }

    deinit { if descriptor >= 0 { _ = close(descriptor) } }

    /// Replaces `buffer`'s contents with up to `limit` bytes; returns false at the end of the file.
    func read(into buffer: inout [UInt8], limit: Int) throws(InputFileError) -> Bool {
        buffer.removeAll(keepingCapacity: true)
        if let zstd {
            while buffer.count < limit {
                let status: ZstdReadStatus
                do { status = try zstd.read(appendingTo: &buffer, limit: limit - buffer.count) } catch { throw Self.map(error) }
                if status == .end { break }
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
