import Foundation

/// Debian's real `prometheus-pushgateway` on 127.0.0.1, on a free port, with its persistence file
/// in `directory`; stopped when it goes away.
public final class Pushgateway {
    public static let binary = "/usr/bin/prometheus-pushgateway"
    public struct DidNotStart: Error, CustomStringConvertible {
        public let description: String
    }

    public let port: Int
    private let process: Process

    public init(directory: TemporaryDirectory) throws {
        port = try LoopbackPort.free()
        process = try Command.start(Self.binary, ["--web.listen-address=127.0.0.1:\(port)",
                                                  "--persistence.file=\(directory.path("pushgateway.data"))"])
        for _ in 0..<100 {
            if (try? get("/-/ready")) != nil { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
        process.stop()
        throw DidNotStart(description: "prometheus-pushgateway did not get ready on port \(port)")
    }

    deinit { stop() }

    public var url: String { "http://127.0.0.1:\(port)" }

    public func stop() { process.stop() }

    /// GET `path` with Python's urllib; throws unless the answer is 200.
    public func get(_ path: String) throws -> String {
        let script = "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())"
        let result = try Command.tool("python3", ["-c", script, url + path])
        guard result.status == 0 else { throw DidNotStart(description: "GET \(url + path): \(result.stderr)") }
        return result.stdout
    }

    /// The value of the sample `name` whose labels include every one of `labels`, in an exposition text.
    public static func value(in text: String, _ name: String, _ labels: [String: String]) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + "{") || line.hasPrefix(name + " ") {
            guard let space = line.lastIndex(of: " ") else { continue }
            let head = line[..<space]
            guard labels.allSatisfy({ head.contains("\($0.key)=\"\($0.value)\"") }) else { continue }
            return Double(line[line.index(after: space)...])
        }
        return nil
    }
}
