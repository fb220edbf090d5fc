#if canImport(Glibc)
import Glibc
#endif

/// Reads a fuzzer's input from the front: a selector byte, a length-prefixed part, the rest.
/// Every read past the end gives zeros or nothing, so any input is a valid one.
public struct FuzzInput {
    public let bytes: [UInt8]
    public private(set) var offset = 0

    public init(_ data: UnsafePointer<UInt8>, _ size: Int) {
        bytes = Array(UnsafeBufferPointer(start: data, count: size))
    }

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    public var isEmpty: Bool { offset >= bytes.count }

    public mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        offset += 1
        return bytes[offset - 1]
    }

    /// Up to `count` bytes.
    public mutating func take(_ count: Int) -> ArraySlice<UInt8> {
        let end = min(bytes.count, offset + max(0, count))
        defer { offset = end }
        return bytes[offset..<end]
    }

    /// Bytes up to (not including) `separator`, which is consumed; the rest when it is absent.
    public mutating func take(until separator: UInt8) -> ArraySlice<UInt8> {
        let rest = bytes[offset...]
        guard let end = rest.firstIndex(of: separator) else {
            offset = bytes.count
            return rest
        }
        offset = end + 1
        return bytes[rest.startIndex..<end]
    }

    public mutating func rest() -> ArraySlice<UInt8> { take(bytes.count) }
}

/// A file holding one input, for the parsers that read a path (the CSV reader, key files, job
/// files): one per process, rewritten per input, in /dev/shm when there is one (no disk writes).
public enum FuzzFile {
    public static let path: String = {
        let directory = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
        return "\(directory)/apns-bulk-fuzz-\(getpid())"
    }()

    /// Writes `bytes` to `path` (replacing what was there) and returns the path.
    @discardableResult
    public static func write<C: Collection<UInt8>>(_ bytes: C, suffix: String = "") -> String {
        let target = path + suffix
        let descriptor = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        precondition(descriptor >= 0, "cannot create \(target)")
        let array = Array(bytes)
        var written = 0
        while written < array.count {
            let count = array.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + written, $0.count - written) }
            precondition(count > 0, "cannot write \(target)")
            written += count
        }
        close(descriptor)
        return target
    }

    /// Removes the files at exit, so a fuzzing run leaves nothing in /dev/shm.
    public static func removeAtExit(suffixes: [String] = [""]) {
        guard !registered else { return }
        registered = true
        removed = suffixes.map { path + $0 }
        atexit { for file in FuzzFile.removed { unlink(file) } }
    }

    nonisolated(unsafe) private static var registered = false
    nonisolated(unsafe) private static var removed: [String] = []
}

/// Stops the fuzzer with a message when a property the code promises does not hold: libFuzzer
/// then saves the input as a crash, like any trap.
public func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                      file: StaticString = #fileID, line: UInt = #line) {
    if !condition() {
        let text = Array("fuzz property failed (\(file):\(line)): \(message())\n".utf8)
        _ = text.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
        abort()
    }
}
