#if canImport(Glibc)
import Glibc
#endif

/// Why reading a zstd file failed. `truncated` is the normal aftermath of a crash while writing.
public enum ZstdReadError: Error, CustomStringConvertible, Equatable {
    case open(path: String, errno: Int32)
    case read(path: String, errno: Int32)
    /// The file ends inside frame number `frame` (1-based), `cutBytes` compressed bytes into it.
    case truncated(path: String, frame: Int, cutBytes: Int)
    /// zstd refused the data at compressed byte `offset`, in frame number `frame` (1-based).
    case corrupt(path: String, frame: Int, offset: Int, detail: String)

    /// The message for the user: what failed, and what to do about it.
    public var description: String {
        switch self {
        case .open(let path, let code):
            return "cannot open \(path): \(String(cString: strerror(code)))"
        case .read(let path, let code):
            return "cannot read \(path): \(String(cString: strerror(code)))"
        case .truncated(let path, let frame, let cutBytes):
            return "\(path) is truncated: zstd frame \(frame) is cut after \(cutBytes) bytes (an interrupted write or copy); re-create or re-copy the file"
        case .corrupt(let path, let frame, let offset, let detail):
            return "\(path) is not valid zstd data (frame \(frame), byte \(offset)): \(detail); check that the file is a complete .zst file"
        }
    }
}
