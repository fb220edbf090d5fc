import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Ports on 127.0.0.1 for the servers a test starts.
public enum LoopbackPort {
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// A port nothing listens on now: bound to port 0 and closed again (the kernel's next ephemeral one).
    public static func free() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw Unavailable(description: "no free port on 127.0.0.1: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether a TCP connect to 127.0.0.1:`port` succeeds within `timeout` seconds.
    public static func waitUntilListening(_ port: Int, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
            let status = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            close(fd)
            if status == 0 { return true }
            usleep(20_000)
        }
        return false
    }

    /// Reads a starting server's stdout until `done` says its text is complete (its "listening
    /// HOST:PORT" lines are out) or the pipe ends; returns what it read. The raw fd, not
    /// FileHandle.availableData, which may wait for more than one line on Linux.
    public static func readAnnouncement(_ pipe: Pipe, until done: (String) -> Bool) -> String {
        let fd = pipe.fileHandleForReading.fileDescriptor
        var text = ""
        var chunk = [UInt8](repeating: 0, count: 512)
        while !done(text) {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            text += String(decoding: chunk[0..<count], as: UTF8.self)
        }
        return text
    }

    /// The port of the first line of `text` that starts with `prefix` ("listening 127.0.0.1:PORT").
    public static func announced(_ prefix: String, in text: String) -> Int? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }),
              let colon = line.lastIndex(of: ":") else { return nil }
        return Int(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }
}
