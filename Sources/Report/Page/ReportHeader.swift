import Foundation
import Pipeline

/// What run a page is about, from summary.json (its keys are a contract, docs/file-formats.md): the header's
/// values, read leniently, since a summary may be older, newer or missing (`report --html` over a
/// log copied alone): a key it lacks is simply not shown.
public struct ReportHeader: Sendable {
    public var input: String?
    public var fingerprintSize: Int?
    public var fingerprintSHA256: String?
    public var startedAt: String?
    public var finishedAt: String?
    public var elapsedSeconds: Double?
    public var notificationsPerSecond: Double?
    public var exitStatus: Int?
    public var version: String?
    public var endpoints: [String] = []
    public var connections: Int?
    public var shard: String?
    /// A `--dry-run`'s summary (`"dry_run": true`): nothing was sent, so there is no time to chart.
    public var dryRun = false
    /// Its `would_send`: rows that passed every check.
    public var wouldSend: Int?
    /// `by_key` and `by_environment` (issue 18's), when the summary has them: each name with its counts.
    public var byKey: [(name: String, counts: [(String, Int)])] = []
    public var byEnvironment: [(name: String, counts: [(String, Int)])] = []

    public init() {}

    /// The header of a summary.json's text; nil when it is not a JSON object.
    public init?(summaryJSON bytes: [UInt8]) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { return nil }
        self.init()
        input = object["input"] as? String
        if let fingerprint = object["fingerprint"] as? [String: Any] {
            fingerprintSize = (fingerprint["size"] as? NSNumber)?.intValue
            fingerprintSHA256 = fingerprint["sample_sha256"] as? String
        }
        startedAt = object["started_at"] as? String
        finishedAt = object["finished_at"] as? String
        elapsedSeconds = (object["elapsed_s"] as? NSNumber)?.doubleValue
        notificationsPerSecond = (object["notifications_per_s"] as? NSNumber)?.doubleValue
        exitStatus = (object["exit_status"] as? NSNumber)?.intValue
        version = object["apns_bulk_version"] as? String
        endpoints = object["endpoints"] as? [String] ?? []
        connections = (object["connections"] as? NSNumber)?.intValue
        shard = object["shard"] as? String
        dryRun = object["dry_run"] as? Bool ?? false
        wouldSend = (object["would_send"] as? NSNumber)?.intValue
        byKey = Self.breakdown(object["by_key"])
        byEnvironment = Self.breakdown(object["by_environment"])
    }

    /// The summary.json at `path`; nil when it is missing or unreadable.
    public init?(summaryPath path: String) {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        self.init(summaryJSON: Array(data))
    }

    /// `{"name": n}` or `{"name": {"delivered": n, ...}}`, sorted by name.
    private static func breakdown(_ value: Any?) -> [(name: String, counts: [(String, Int)])] {
        guard let object = value as? [String: Any] else { return [] }
        return object.keys.sorted().map { name in
            if let count = object[name] as? NSNumber { return (name, [("rows", count.intValue)]) }
            let inner = object[name] as? [String: Any] ?? [:]
            return (name, inner.keys.sorted().compactMap { key in (inner[key] as? NSNumber).map { (key, $0.intValue) } })
        }
    }

    /// What an exit status means (docs/resume-and-bad-nights.md, "Exit status").
    public static func meaning(ofExitStatus status: Int) -> String {
        switch status {
        case 0: "finished: every row has its outcome"
        case 1: "bad flags or files: nothing was sent"
        case 2: "aborted: the run stopped early (refused credentials, a signal, unreadable input or a fatal error)"
        case 3: "some rows gave up: the endpoints were unreachable"
        default: "unknown exit status"
        }
    }
}
