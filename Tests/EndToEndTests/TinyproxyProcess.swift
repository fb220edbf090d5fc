import Foundation
import Testing

/// Debian's real `tinyproxy` on 127.0.0.1 and a free port, in the foreground (`-d`, so it is
/// stopped with its process), with a configuration file of its own: CONNECT allowed to the given
/// ports only, optional Basic credentials, and a log of every connection.
final class TinyproxyProcess {
    let process = Process()
    let port: Int
    let logFile: String

    init(scratch: Scratch, connectPorts: [Int], basicAuth: (user: String, password: String)? = nil) throws {
        port = try FreePort.pick()
        logFile = scratch.path("tinyproxy-\(port).log")
        var config = """
            Port \(port)
            Listen 127.0.0.1
            Timeout 60
            MaxClients 50
            LogFile "\(logFile)"
            LogLevel Connect
            Allow 127.0.0.1

            """
        for connectPort in connectPorts { config += "ConnectPort \(connectPort)\n" }
        if let basicAuth { config += "BasicAuth \(basicAuth.user) \(basicAuth.password)\n" }
        let configFile = try scratch.write("tinyproxy-\(port).conf", config)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/tinyproxy")
        process.arguments = ["-d", "-c", configFile]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard FreePort.waitUntilListening(port, timeout: 10) else {
            stop()
            throw HarnessError.serverDidNotStart("tinyproxy did not listen on 127.0.0.1:\(port): \(log)")
        }
    }

    var url: String { "http://127.0.0.1:\(port)" }

    /// Stops tinyproxy and waits for it. SIGKILL: a child of the test process inherits its blocked
    /// SIGTERM, which tinyproxy (unlike our mock server) never unblocks. Its log is written line by line.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit { stop() }

    var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    /// The CONNECT requests the proxy logged ("CONNECT 127.0.0.1:PORT HTTP/1.1").
    var connectRequests: [String] {
        log.split(separator: "\n").filter { $0.contains("Request") && $0.contains("CONNECT ") }.map(String.init)
    }
}

/// Loopback ports for servers the tests start.
enum FreePort {
    /// A port nothing listens on now: bound to port 0 and closed again.
    static func pick() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let port: Int? = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                guard bind(fd, raw, length) == 0, getsockname(fd, raw, &length) == 0 else { return nil }
                return Int(UInt16(bigEndian: pointer.pointee.sin_port))
            }
        }
        guard let port else { throw HarnessError.serverDidNotStart("no free port: errno \(errno)") }
        return port
    }

    /// Whether a TCP connect to 127.0.0.1:`port` succeeds within `timeout` seconds.
    static func waitUntilListening(_ port: Int, timeout: Double) -> Bool {
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
}

/// A TCP server on 127.0.0.1 that greets every connection with `banner` (Python's socket
/// module, as a stand-in for a service that is not a proxy).
final class BannerServer {
    let process = Process()
    let port: Int

    init(banner: String) throws {
        let script = """
            import socket, sys, threading
            s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(16)
            print(s.getsockname()[1], flush=True)
            def serve(c):
                c.sendall(sys.argv[1].encode())
                try: c.recv(4096)
                except OSError: pass
            while True:
                c, _ = s.accept()
                threading.Thread(target=serve, args=(c,), daemon=True).start()
            """
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, banner]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw HarnessError.serverDidNotStart("the banner server printed \(line)")
        }
        self.port = port
    }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit { stop() }
}
