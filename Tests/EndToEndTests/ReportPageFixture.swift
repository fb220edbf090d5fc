import Foundation
import Testing
import TestSupport

/// The campaigns and pages the browser tests look at, made once and rendered in one headless
/// Chromium (few, short browser runs): a run with faults and a hostile input file name, three
/// shards merged, a comparison, a log copied without its sidecar, and a campaign killed with
/// SIGKILL and resumed. Chromium runs inside `unshare -n` (no network) and loads each page from disk.
// Immutable once made (every property a let), read by the tests of one serialized suite.
final class ReportPageFixture: @unchecked Sendable {
    /// A page with what summary.json says (when one stands for it) and what Chromium saw.
    struct Page {
        let path: String
        let summary: [String: Any]
        let browser: [String: Any]

        var dom: String { browser["dom"] as? String ?? "" }
        var text: String { browser["text"] as? String ?? "" }

        /// `data-count` of the element whose `attribute` is `value`.
        func count(_ attribute: String, _ value: String) -> Int? {
            guard let range = dom.range(of: "\(attribute)=\"\(value)\" data-count=\"") else { return nil }
            return Int(dom[range.upperBound...].prefix { $0.isNumber })
        }

        /// How often `needle` occurs in the DOM.
        func occurrences(_ needle: String) -> Int { dom.components(separatedBy: needle).count - 1 }
    }

    static let shared = Result { try ReportPageFixture() }

    static let root = SourceTree.root()
    static let hostileName = "<img src=x onerror=alert(1)>.csv"

    let scratch: TemporaryDirectory
    let run: Page, shards: Page, compare: Page, noSidecar: Page, resumed: Page
    /// The runs behind the pages, for the accounting checks.
    let campaigns: [(CampaignRun, rows: Int)]
    let deadTokens: [String]
    let shardSummaries: [[String: Any]]
    let resumedRunStartedAt: String
    let compareUsage: Binary.Result

    private init() throws {
        let scratch = try TemporaryDirectory()
        self.scratch = scratch
        let csv = scratch.path(Self.hostileName), unregistered = scratch.path("unregistered.txt")
        let gen = try Binary.run(["gen", "--rows", "3000", "--out", csv, "--invalid-rate", "0.02", "--unregistered-rate", "0.03",
                                  "--unregistered-out", unregistered, "--seed", "19"])
        try #require(gen.status == 0, "gen failed: \(gen.stderr)")
        func send(_ out: String, _ extra: [String]) throws -> CampaignRun {
            let result = try Binary.run(["send", "--input", csv, "--topic", MockServerProcess.topic, "--endpoint", "mock",
                                         "--connections", "2", "--out", scratch.path(out), "--progress", "never",
                                         "--mock-option", "unregistered-file=\(unregistered)"] + extra)
            return CampaignRun(result: result, outDirectory: scratch.path(out))
        }
        let faulty = try send("run", ["--mock-option", "fail=500:0.02", "--mock-option", "too-many-requests=0.02",
                                      "--mock-option", "goaway-after=900", "--mock-option", "seed=7"])
        var shardRuns: [CampaignRun] = []
        for index in 0..<3 { shardRuns.append(try send("shard\(index)", ["--shard", "\(index)/3"])) }
        // Killed while paced (3,000 rows at 1,500/s), then resumed to the end.
        let resumedOut = scratch.path("resumed")
        try Self.sendKilled(["send", "--input", csv, "--topic", MockServerProcess.topic, "--endpoint", "mock", "--out", resumedOut,
                             "--progress", "never", "--rate", "1500", "--mock-option", "unregistered-file=\(unregistered)"], out: resumedOut)
        let resumedRun = try send("resumed", ["--resume"])
        campaigns = [(faulty, 3000), (resumedRun, 3000)]

        // The log alone, as a user copies it: no sidecar, no summary beside it.
        try FileManager.default.createDirectory(atPath: scratch.path("alone"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: faulty.outDirectory + "/results.jsonl.zst", toPath: scratch.path("alone/results.jsonl.zst"))
        let pages = (shards: scratch.path("shards.html"), compare: scratch.path("compare.html"), alone: scratch.path("alone.html"))
        let merged = try Binary.run(["report"] + shardRuns.map { $0.outDirectory + "/results.jsonl.zst" } + ["--html", pages.shards])
        try #require(merged.status == 0, "report --html failed: \(merged.stderr)")
        let compared = try Binary.run(["report", "--html", pages.compare, "--compare", faulty.outDirectory, shardRuns[0].outDirectory])
        try #require(compared.status == 0, "report --compare failed: \(compared.stderr)")
        let alone = try Binary.run(["report", scratch.path("alone/results.jsonl.zst"), "--html", pages.alone])
        try #require(alone.status == 0, "report --html of a lone log failed: \(alone.stderr)")
        compareUsage = try Binary.run(["report", faulty.outDirectory + "/results.jsonl.zst", "--html", scratch.path("never.html"),
                                       "--compare", faulty.outDirectory, shardRuns[1].outDirectory])

        let all = [faulty.outDirectory + "/report.html", pages.shards, pages.compare, pages.alone, resumedOut + "/report.html"]
        let rendered = try Self.render(all, scratch: scratch)
        let summary = try faulty.summary
        func page(_ index: Int, _ summary: [String: Any]) throws -> Page {
            Page(path: all[index], summary: summary, browser: try #require(rendered[all[index]] as? [String: Any], "no render of \(all[index])"))
        }
        let runPage = try page(0, summary)
        run = runPage
        shardSummaries = try shardRuns.map { try $0.summary }
        shards = try page(1, [:])
        compare = try page(2, [:])
        noSidecar = try page(3, summary)
        resumed = try page(4, try resumedRun.summary)
        resumedRunStartedAt = try resumedRun.summary["started_at"] as? String ?? ""
        deadTokens = try faulty.deadTokens.map { $0.first ?? "" }
    }

    /// Starts `send`, kills it with SIGKILL about 1.2 s after it began sending, and waits for it.
    private static func sendKilled(_ arguments: [String], out: String) throws {
        let process = try Binary.start(arguments)
        let deadline = Date().addingTimeInterval(30)
        let mark = out + "/sent-rows"
        while process.isRunning && Date() < deadline && !FileManager.default.fileExists(atPath: mark) {
            Thread.sleep(forTimeInterval: 0.01)
        }
        Thread.sleep(forTimeInterval: 1.2)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Every page in one Chromium, with no network: the DOM, errors and screenshot of each.
    private static func render(_ pages: [String], scratch: TemporaryDirectory) throws -> [String: Any] {
        let script = root.appendingPathComponent("tools/render_page.py").path
        let pairs = pages.enumerated().map { "\($1)=" + scratch.path("shot\($0).png") }
        let result = try Command.run("/usr/bin/unshare", ["-n", "python3", script] + pairs)
        try #require(result.status == 0, "render_page.py failed: \(result.stderr)")
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] ?? [:]
    }
}
