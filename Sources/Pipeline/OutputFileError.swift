#if canImport(Glibc)
import Glibc
#endif

/// Why an output file could not be written.
public struct OutputFileError: Error, CustomStringConvertible, Equatable {
    public let path: String
    public let errno: Int32
    public var description: String {
        "cannot write \(path): \(String(cString: strerror(errno))); check the directory exists, is writable and has space"
    }
}
