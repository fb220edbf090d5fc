import Foundation
import Testing
import TestSupport

/// The `mock-server` subcommand of the built binary, listening on an ephemeral loopback port.
final class MockServerProcess {
    static let keyID = "KEYID12345"
    static let teamID = "TEAM123456"
    static let topic = "com.example.app"

    let process: Process
    let port: Int
    let caFile: String
    let statsFile: String
    let recordFile: String
    private let stderrFile: String

    /// `authentication` replaces the token-verification flags (e.g. `--client-ca CA.pem`).
    init(scratch: TemporaryDirectory, keyFile: String, extra: [String] = [], authentication: [String]? = nil) throws {
        caFile = scratch.path("mock-ca-\(UUID().uuidString.prefix(8)).pem")
        statsFile = scratch.path("mock-stats-\(UUID().uuidString.prefix(8)).json")
        recordFile = scratch.path("mock-record-\(UUID().uuidString.prefix(8)).jsonl.zst")
        let auth = authentication ?? ["--verify-key-file", keyFile, "--key-id", Self.keyID, "--team-id", Self.teamID]
        let stdoutPipe = Pipe()
        // A file, not a pipe: nobody drains it while the server runs.
        stderrFile = scratch.path("mock-stderr-\(UUID().uuidString.prefix(8)).log")
        process = try Command.start(Binary.url.path, ["mock-server", "--listen", "127.0.0.1:0", "--ca-out", caFile] + auth
            + ["--topic", Self.topic, "--stats-out", statsFile, "--record-out", recordFile] + extra,
                                    standardOutput: stdoutPipe, standardError: Command.outputFile(stderrFile))
        // The server prints "listening 127.0.0.1:PORT" once it accepts connections.
        let text = LoopbackPort.readAnnouncement(stdoutPipe) { $0.contains("listening ") && $0.contains("\n") }
        guard let found = LoopbackPort.announced("listening ", in: text) else {
            process.terminate()
            throw HarnessError.serverDidNotStart((try? String(contentsOfFile: stderrFile, encoding: .utf8)) ?? "")
        }
        port = found
    }

    var endpoint: String { "127.0.0.1:\(port)" }

    /// Stops the server (SIGTERM: it writes its stats and record files) and waits for it.
    func stop() { process.stop() }

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
