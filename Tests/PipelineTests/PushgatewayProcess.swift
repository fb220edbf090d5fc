import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Debian's real `prometheus-pushgateway` on 127.0.0.1, on a free port, with its persistence file
/// in `directory`; stopped when it goes away.
final class PushgatewayProcess {
    static let binary = "/usr/bin/prometheus-pushgateway"
    let process = Process()
    let port: Int

    init(directory: TemporaryDirectory) throws {
        port = try Self.freePort()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["--web.listen-address=127.0.0.1:\(port)",
                             "--persistence.file=\(directory.path("pushgateway.data"))"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<100 {
            if (try? get("/-/ready")) != nil { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
        stop()
        throw PushgatewayDidNotStart()
    }

    deinit { stop() }

    var url: String { "http://127.0.0.1:\(port)" }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// GET `path`; throws unless the answer is 200.
    func get(_ path: String) throws -> String {
        let script = "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, url + path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw PushgatewayDidNotStart() }
        return String(decoding: data, as: UTF8.self)
    }

    /// The value of the sample `name` with (at least) `labels` in an exposition text.
    static func value(in text: String, _ name: String, _ labels: [String: String]) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + "{") || line.hasPrefix(name + " ") {
            guard let space = line.lastIndex(of: " ") else { continue }
            let head = line[..<space]
            guard labels.allSatisfy({ head.contains("\($0.key)=\"\($0.value)\"") }) else { continue }
            return Double(line[line.index(after: space)...])
        }
        return nil
    }

    /// A port nothing listens on now (the kernel's next ephemeral one).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw PushgatewayDidNotStart() }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    struct PushgatewayDidNotStart: Error {}
}
