#if canImport(Glibc)
import Glibc
#endif

/// Why an output file could not be written.
public struct OutputFileError: Error, CustomStringConvertible, Equatable {
    /// The file that could not be written.
    public let path: String
    /// The system's error number.
    public let errno: Int32
    /// One line for stderr, with what to check.
    public var description: String {
        "cannot write \(path): \(String(cString: strerror(errno))); check the directory exists, is writable and has space"
    }
}
