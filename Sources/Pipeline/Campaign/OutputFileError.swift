#if canImport(Glibc)
import Glibc
#endif

/// Why an output file could not be written.
public struct OutputFileError: Error, CustomStringConvertible, Equatable {
    /// The file that could not be written.
    public let path: String
    /// The system's error number.
    public let errno: Int32
    /// Said instead of the system's text when more is known (which component of a path is a file).
    public let detail: String?

    /// A failure at `path` with the system's `errno`; `detail` says more when more is known.
    public init(path: String, errno: Int32, detail: String? = nil) {
        self.path = path
        self.errno = errno
        self.detail = detail
    }

    /// One line for stderr, with what to check.
    public var description: String {
        if let detail { return "cannot write \(path): \(detail)" }
        return "cannot write \(path): \(String(cString: strerror(errno))); check the directory exists, is writable and has space"
    }
}
