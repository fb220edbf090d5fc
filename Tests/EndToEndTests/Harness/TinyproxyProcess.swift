import Foundation
import Testing
import TestSupport

/// Debian's real `tinyproxy` on 127.0.0.1 and a free port, in the foreground (`-d`, so it is
/// stopped with its process), with a configuration file of its own: CONNECT allowed to the given
/// ports only, optional Basic credentials, and a log of every connection.
final class TinyproxyProcess {
    let process: Process
    let port: Int
    let logFile: String

    init(scratch: TemporaryDirectory, connectPorts: [Int], basicAuth: (user: String, password: String)? = nil) throws {
        port = try LoopbackPort.free()
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
        process = try Command.start("/usr/bin/tinyproxy", ["-d", "-c", configFile])
        guard LoopbackPort.waitUntilListening(port, timeout: 10) else {
            stop()
            throw HarnessError.serverDidNotStart("tinyproxy did not listen on 127.0.0.1:\(port): \(log)")
        }
    }

    var url: String { "http://127.0.0.1:\(port)" }

    /// Stops tinyproxy and waits for it. SIGKILL: a child of the test process inherits its blocked
    /// SIGTERM, which tinyproxy (unlike our mock server) never unblocks. Its log is written line by line.
    func stop() { process.stop(signal: SIGKILL) }

    deinit { stop() }

    var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    /// The CONNECT requests the proxy logged ("CONNECT 127.0.0.1:PORT HTTP/1.1").
    var connectRequests: [String] {
        log.split(separator: "\n").filter { $0.contains("Request") && $0.contains("CONNECT ") }.map(String.init)
    }
}

/// A TCP server on 127.0.0.1 that greets every connection with `banner` (Python's socket
/// module, as a stand-in for a service that is not a proxy).
final class BannerServer {
    let process: Process
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
        let output = Pipe()
        process = try Command.start("/usr/bin/env", ["python3", "-c", script, banner], standardOutput: output)
        let line = LoopbackPort.readAnnouncement(output) { $0.contains("\n") }
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.stop(signal: SIGKILL)
            throw HarnessError.serverDidNotStart("the banner server printed \(line)")
        }
        self.port = port
    }

    /// SIGKILL: Python does not handle the SIGTERM that the test runner's threads block.
    func stop() { process.stop(signal: SIGKILL) }

    deinit { stop() }
}
