#if canImport(Glibc)
import Glibc
#endif

/// Why writing a zstd file failed, with what to do about it.
public enum ZstdWriteError: Error, CustomStringConvertible, Equatable {
    case open(path: String, errno: Int32)
    case write(path: String, errno: Int32)
    case compress(path: String, detail: String)

    /// The message for the user: what failed, and what to do about it.
    public var description: String {
        switch self {
        case .open(let path, let code):
            return "cannot create \(path): \(String(cString: strerror(code))); check the directory exists and is writable"
        case .write(let path, let code):
            return "cannot write \(path): \(String(cString: strerror(code))); check free disk space"
        case .compress(let path, let detail):
            return "zstd compression failed for \(path): \(detail)"
        }
    }
}
