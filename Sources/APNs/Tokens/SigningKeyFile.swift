#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a key file with plain POSIX calls, so each failure maps to its own message.
enum KeyFile {
    static func load(_ path: String) throws(SigningKeyError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 { throw failure(errno, path: path) }
        defer { close(descriptor) }

        var status = stat()
        if fstat(descriptor, &status) != 0 { throw failure(errno, path: path) }
        if (status.st_mode & S_IFMT) == S_IFDIR { throw .isDirectory(path: path) }
        if Int(status.st_size) > SigningKeyError.maximumFileSize {
            throw .tooLarge(source: "key file \"\(path)\"", bytes: Int(status.st_size))
        }

        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(errno, path: path)
            }
            if count == 0 { break }
            contents.append(contentsOf: chunk.prefix(count))
            if contents.count > SigningKeyError.maximumFileSize {
                throw .tooLarge(source: "key file \"\(path)\"", bytes: contents.count)
            }
        }
        return contents
    }

    private static func failure(_ code: Int32, path: String) -> SigningKeyError {
        switch code {
        case ENOENT, ENOTDIR: .fileNotFound(path: path)
        case EACCES, EPERM: .permissionDenied(path: path)
        case EISDIR: .isDirectory(path: path)
        default: .unreadable(path: path, detail: String(cString: strerror(code)))
        }
    }
}
