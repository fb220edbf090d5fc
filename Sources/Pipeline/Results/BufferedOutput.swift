#if canImport(Glibc)
import Glibc
#endif

/// A file written in large buffers, one `write()` per buffer.
final class BufferedOutput {
    let path: String
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private let bufferSize: Int
    private var closed = false

    init(path: String, bufferSize: Int = 1 << 20) throws(OutputFileError) {
        self.path = path
        self.bufferSize = bufferSize
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw OutputFileError(path: path, errno: errno) }
        buffer.reserveCapacity(bufferSize + 4096)
    }

    deinit { if !closed { _ = Glibc.close(descriptor) } }

    func append(_ bytes: [UInt8]) { buffer.append(contentsOf: bytes) }

    func withBuffer(_ body: (inout [UInt8]) -> Void) throws(OutputFileError) {
        body(&buffer)
        if buffer.count >= bufferSize { try flush() }
    }

    func flush() throws(OutputFileError) {
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw OutputFileError(path: path, errno: errno)
            }
            offset += written
        }
        buffer.removeAll(keepingCapacity: true)
    }

    func close() throws(OutputFileError) {
        guard !closed else { return }
        try flush()
        closed = true
        if Glibc.close(descriptor) != 0 { throw OutputFileError(path: path, errno: errno) }
    }
}
