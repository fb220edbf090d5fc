import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Debian's real `prometheus-pushgateway` on 127.0.0.1, on a free port, with its persistence file
/// in the scratch directory; stopped when it goes away.
final class PushgatewayServer {
    let process = Process()
    let port: Int

    init(scratch: Scratch) throws {
        port = try MetricsTests.freePort()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prometheus-pushgateway")
        process.arguments = ["--web.listen-address=127.0.0.1:\(port)", "--persistence.file=\(scratch.path("pushgateway.data"))"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<100 {
            if (try? get("/-/ready")) != nil { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
        stop()
        throw HarnessError.serverDidNotStart("prometheus-pushgateway did not get ready on port \(port)")
    }

    deinit { stop() }

    var url: String { "http://127.0.0.1:\(port)" }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// GET `path` with Python's urllib; throws unless the answer is 200.
    func get(_ path: String) throws -> String {
        let script = "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())"
        let result = try Command.run("/usr/bin/env", ["python3", "-c", script, url + path])
        guard result.status == 0 else { throw HarnessError.serverDidNotStart(result.stderr) }
        return result.stdout
    }

    /// The value of the sample `name` whose labels include every one of `labels`, in `text`.
    static func value(in text: String, _ name: String, _ labels: [String: String]) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + "{") || line.hasPrefix(name + " ") {
            guard let space = line.lastIndex(of: " ") else { continue }
            let head = line[..<space]
            guard labels.allSatisfy({ head.contains("\($0.key)=\"\($0.value)\"") }) else { continue }
            return Double(line[line.index(after: space)...])
        }
        return nil
    }
}
