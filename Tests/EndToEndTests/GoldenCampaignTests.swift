import Foundation
import Testing
import TestSupport

/// Pins what `send` writes for one fixed campaign: every outcome, reason, attempt count and dead token of
/// Golden/campaign.csv against the mock's scripted answers (Golden/respond.csv, Golden/unregistered.csv),
/// over one connection. Only what varies from run to run is masked: `apns_id`, `latency_ms` and `endpoint`
/// in the records; times, rates, latency and endpoints in summary.json.
/// To regenerate after a deliberate change: APNS_BULK_WRITE_GOLDEN=1 swift test --skip-build --filter GoldenCampaignTests
@Suite(.serialized) struct GoldenCampaignTests {
    static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")
    static let rows = 45

    @Test func aFixedCampaignWritesTheGoldenResultsDeadTokensAndSummary() throws {
        let scratch = try TemporaryDirectory()
        let key = try scratch.signingKey()
        let mock = try MockServerProcess(scratch: scratch, keyFile: key, extra: [
            "--respond-file", Self.file("respond.csv"), "--unregistered-file", Self.file("unregistered.csv"),
        ])
        let out = scratch.path("out")
        let result = try Binary.run([
            "send", "--input", Self.file("campaign.csv"), "--endpoint", mock.endpoint, "--ca-file", mock.caFile,
            "--key-file", key, "--key-id", MockServerProcess.keyID, "--team-id", MockServerProcess.teamID,
            "--topic", MockServerProcess.topic, "--connections", "1", "--max-attempts", "3",
            "--retry-base-ms", "20", "--retry-max-ms", "100", "--progress", "never", "--out", out,
        ])
        mock.stop()
        let run = CampaignRun(result: result, outDirectory: out)
        #expect(result.status == 3, "rows gave up: \(result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: Self.rows)

        let records = try Self.records(out + "/results.jsonl.zst")
        let deadTokens = try Self.deadTokens(out + "/dead-tokens.csv")
        let summary = try Self.summary(out + "/summary.json")
        if ProcessInfo.processInfo.environment["APNS_BULK_WRITE_GOLDEN"] == "1" {
            try records.write(toFile: Self.file("results.jsonl"), atomically: true, encoding: .utf8)
            try deadTokens.write(toFile: Self.file("dead-tokens.csv"), atomically: true, encoding: .utf8)
            try summary.write(toFile: Self.file("summary.json"), atomically: true, encoding: .utf8)
        }
        Self.expectLines(records, equal: try Self.read("results.jsonl"), "results.jsonl.zst")
        Self.expectLines(deadTokens, equal: try Self.read("dead-tokens.csv"), "dead-tokens.csv")
        Self.expectLines(summary, equal: try Self.read("summary.json"), "summary.json")
    }

    static func file(_ name: String) -> String { golden.appendingPathComponent(name).path }

    static func read(_ name: String) throws -> String { try String(contentsOfFile: file(name), encoding: .utf8) }

    /// One difference per line, so a failure names the row that changed.
    static func expectLines(_ actual: String, equal expected: String, _ what: String,
                            sourceLocation: SourceLocation = #_sourceLocation) {
        let actualLines = actual.split(separator: "\n", omittingEmptySubsequences: false)
        let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(actualLines.count == expectedLines.count, "\(what): line count", sourceLocation: sourceLocation)
        for (index, (got, want)) in zip(actualLines, expectedLines).enumerated() where got != want {
            Issue.record("\(what) line \(index + 1):\n  got  \(got)\n  want \(want)", sourceLocation: sourceLocation)
        }
    }

    /// The result log as the zstd CLI decodes it, sorted by row, with the run-dependent values masked
    /// (`null` stays: a row never sent has none).
    static func records(_ file: String) throws -> String {
        let decoded = try ZstdCLI.decode(file)
        try #require(decoded.status == 0, "zstd -d: \(decoded.stderr)")
        let masks = [(#""apns_id":"[^"]*""#, #""apns_id":"*""#),
                     (#""latency_ms":[0-9.eE+-]+"#, #""latency_ms":*"#),
                     (#""endpoint":"[^"]*""#, #""endpoint":"*""#)]
        let lines = decoded.stdout.split(separator: "\n").map { line in
            masks.reduce(String(line)) { $0.replacingOccurrences(of: $1.0, with: $1.1, options: .regularExpression) }
        }
        func row(_ line: String) -> Int {
            Int(line.firstMatch(of: /"row":([0-9]+)/)?.output.1 ?? "") ?? -1
        }
        return lines.sorted { row($0) < row($1) }.joined(separator: "\n") + "\n"
    }

    /// dead-tokens.csv with its header first and its lines sorted.
    static func deadTokens(_ file: String) throws -> String {
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map(String.init)
        return ([lines.first ?? ""] + lines.dropFirst().sorted()).joined(separator: "\n") + "\n"
    }

    /// summary.json as written (one key a line, in its order), with the values that differ from run to run
    /// masked, and `input` by its file name: all of its path that does not depend on where the repository is.
    static func summary(_ file: String) throws -> String {
        let masked: Set<String> = ["elapsed_s", "notifications_per_s", "latency_ms", "endpoints", "started_at", "finished_at"]
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map { line -> String in
            guard let match = line.firstMatch(of: /^  "([a-z_]+)": (.*?)(,?)$/) else { return String(line) }
            let (key, value, comma) = (String(match.output.1), match.output.2, match.output.3)
            if masked.contains(key) { return "  \"\(key)\": *\(comma)" }
            if key == "input", let name = value.split(separator: "/").last {
                return "  \"input\": \"\(name.hasSuffix("\"") ? name : name + "\"")\(comma)"
            }
            return String(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
