import Foundation
import Testing

/// Runs real campaigns for the end-to-end tests: the built binary's `mock-server` on loopback,
/// fresh keys, `gen`, `send`, and readers for the files `send` writes.
final class Scratch {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("apns-bulk-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func write(_ name: String, _ text: String) throws -> String {
        let file = path(name)
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// A fresh P-256 key in PKCS#8 PEM, as Apple's .p8 files hold.
    func signingKey(_ name: String = "key.p8") throws -> String {
        let file = path(name)
        let result = try Command.run("/usr/bin/openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt",
                                                         "ec_paramgen_curve:P-256", "-out", file])
        try #require(result.status == 0, "openssl genpkey failed: \(result.stderr)")
        return file
    }
}

/// Runs a program to the end and collects what it printed.
enum Command {
    static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> Binary.Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read stderr on another thread so that neither pipe can fill up and stall the child.
        let errData = LockedData()
        let errReader = Thread { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
        errReader.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Binary.Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                             stderr: String(decoding: errData.wait(), as: UTF8.self))
    }
}

/// Hands the stderr bytes from the reading thread to the waiting one.
final class LockedData: @unchecked Sendable {
    private let condition = NSCondition()
    private var data: Data?

    func set(_ value: Data) {
        condition.lock()
        data = value
        condition.signal()
        condition.unlock()
    }

    func wait() -> Data {
        condition.lock()
        defer { condition.unlock() }
        while data == nil { condition.wait() }
        return data!
    }
}

/// The `mock-server` subcommand of the built binary, listening on an ephemeral loopback port.
final class MockServerProcess {
    static let keyID = "KEYID12345"
    static let teamID = "TEAM123456"
    static let topic = "com.example.app"

    let process = Process()
    let port: Int
    let caFile: String
    let statsFile: String
    let recordFile: String
    private let stderrFile: String

    /// `authentication` replaces the token-verification flags (e.g. `--client-ca CA.pem`).
    init(scratch: Scratch, keyFile: String, extra: [String] = [], authentication: [String]? = nil) throws {
        caFile = scratch.path("mock-ca-\(UUID().uuidString.prefix(8)).pem")
        statsFile = scratch.path("mock-stats-\(UUID().uuidString.prefix(8)).json")
        recordFile = scratch.path("mock-record-\(UUID().uuidString.prefix(8)).jsonl.zst")
        process.executableURL = Binary.url
        let auth = authentication ?? ["--verify-key-file", keyFile, "--key-id", Self.keyID, "--team-id", Self.teamID]
        process.arguments = ["mock-server", "--listen", "127.0.0.1:0", "--ca-out", caFile] + auth
            + ["--topic", Self.topic, "--stats-out", statsFile, "--record-out", recordFile] + extra
        let stdoutPipe = Pipe()
        process.standardOutput = stdoutPipe
        // A file, not a pipe: nobody drains it while the server runs.
        stderrFile = scratch.path("mock-stderr-\(UUID().uuidString.prefix(8)).log")
        _ = FileManager.default.createFile(atPath: stderrFile, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: stderrFile)
        try process.run()
        // The server prints "listening 127.0.0.1:PORT" once it accepts connections. Read the raw
        // fd: FileHandle.availableData may wait for more than one line on Linux.
        let fd = stdoutPipe.fileHandleForReading.fileDescriptor
        var text = ""
        var found: Int?
        var chunk = [UInt8](repeating: 0, count: 256)
        while found == nil {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            text += String(decoding: chunk[0..<count], as: UTF8.self)
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening ") }),
               let colon = line.lastIndex(of: ":"), text.contains("\n") {
                found = Int(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
        }
        guard let found else {
            process.terminate()
            throw HarnessError.serverDidNotStart((try? String(contentsOfFile: stderrFile, encoding: .utf8)) ?? "")
        }
        port = found
    }

    var endpoint: String { "127.0.0.1:\(port)" }

    /// Stops the server (SIGTERM: it writes its stats and record files) and waits for it.
    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    deinit { stop() }

    func stats() throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: statsFile))
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }

    /// The mock's per-request record (`--record-out`), decoded with the zstd CLI.
    func records() throws -> [[String: Any]] {
        try ZstdCLI.jsonLines(recordFile)
    }
}

enum HarnessError: Error {
    case serverDidNotStart(String)
}

enum ZstdCLI {
    static func decode(_ file: String) throws -> Binary.Result {
        try Command.run("/usr/bin/zstd", ["-dc", "-q", file])
    }

    static func jsonLines(_ file: String) throws -> [[String: Any]] {
        let result = try decode(file)
        return try result.stdout.split(separator: "\n").map { line in
            try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
        }
    }
}

/// What one `send` run left in its --out directory.
struct CampaignRun {
    let result: Binary.Result
    let outDirectory: String

    var summary: [String: Any] {
        get throws {
            let data = try Data(contentsOf: URL(fileURLWithPath: outDirectory + "/summary.json"))
            return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        }
    }

    /// The result log, decoded with the zstd CLI, not our own reader.
    var records: [[String: Any]] { get throws { try ZstdCLI.jsonLines(outDirectory + "/results.jsonl.zst") } }

    var deadTokens: [[String]] {
        get throws {
            let text = try String(contentsOfFile: outDirectory + "/dead-tokens.csv", encoding: .utf8)
            return text.split(separator: "\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        }
    }

    static let outcomes = ["delivered", "unregistered", "bad_token", "failed", "rejected", "gave_up", "aborted"]

    /// The accounting invariant, checked the way a user's script would: rows == sum of outcomes
    /// in summary.json, and every data row 1...rows exactly once in the result log.
    func checkEveryRowExactlyOnce(rows expected: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let summary = try summary
        let rows = summary["rows"] as? Int ?? -1
        #expect(rows == expected, "summary rows", sourceLocation: sourceLocation)
        let sum = Self.outcomes.reduce(0) { $0 + (summary[$1] as? Int ?? 0) }
        #expect(sum == rows, "rows == sum of outcomes", sourceLocation: sourceLocation)
        let seen = try records.compactMap { $0["row"] as? Int }.sorted()
        #expect(seen == Array(1...max(expected, 1)).prefix(expected).map { $0 }, "each row once in the result log",
                sourceLocation: sourceLocation)
    }
}
