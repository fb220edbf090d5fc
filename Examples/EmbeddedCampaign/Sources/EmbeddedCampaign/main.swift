// A program that embeds apns-bulk: it starts the in-process mock APNs on 127.0.0.1, sends a few
// notifications from memory through Pipeline's public API (`Campaign.run(rows:)`, each row's
// outcome delivered to a callback, with Report's standard exporters attached as `apns-bulk send`
// has them), and exits non-zero unless every row ended in exactly one outcome, the one the mock
// was set up to give, and the output directory holds what `send` writes.
import APNs
import Foundation
import MockAPNs
import Pipeline
import Report
import Synchronization
import Transport

/// One notification to send, and the outcome the mock is set up to give it.
struct Row {
    let deviceToken: String
    let payload: String
    let expected: Outcome
}

/// A failed check: its message goes to stderr and the program exits 1.
struct CheckFailure: Error, CustomStringConvertible {
    let description: String
}

let topic = "com.example.embedded"
let unregisteredToken = String(repeating: "0d", count: 32)
let rows: [Row] = (1...4).map { index in
    Row(deviceToken: String(format: "%064x", 0xA11CE + index),
        payload: #"{"aps":{"alert":"Hello \#(index) from an embedding program"}}"#, expected: .delivered)
} + [Row(deviceToken: unregisteredToken, payload: #"{"aps":{"alert":"Too late"}}"#, expected: .unregistered)]

/// Sends `rows` from memory through `Campaign.run(rows:)` and returns what the outcome callback
/// received: one record per row, handed over on the campaign's writer thread. The result files,
/// the timeline sidecar and report.html are still written, to a temporary directory removed
/// afterwards once each is found there.
func send(_ rows: [Row], to mock: MockAPNsServer, signingKey: SigningKey,
          keyID: ProviderToken.KeyID, teamID: ProviderToken.TeamID) throws -> (Campaign.Result, [ResultRecord]) {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("embedded-campaign-\(getpid())").path
    defer { try? FileManager.default.removeItem(atPath: directory) }

    guard let authority = mock.certificateAuthority else { throw CheckFailure(description: "the mock has no CA") }
    var configuration = CampaignConfiguration(
        authentication: .token(try TokenSource(signingKey: signingKey, keyID: keyID, teamID: teamID)),
        endpoints: [Endpoint(host: "127.0.0.1", port: mock.port)],
        tls: try TLSContext.client(additionalTrust: .authority(authority)),
        outputDirectory: directory + "/out")
    configuration.defaults.topic = topic
    configuration.connections = 1
    configuration.reactorThreads = 1
    // The timeline sidecar and report.html (and metrics, had `configuration.metrics` asked for them).
    configuration.exporters += CampaignExporter.standard

    // The callback runs on the writer thread: it only appends, under a lock.
    let outcomes = Mutex<[ResultRecord]>([])
    let campaign = Campaign(configuration: configuration) { record in
        outcomes.withLock { $0.append(record) }
    }
    let result = try campaign.run(rows: rows.map { CampaignRow(deviceToken: $0.deviceToken, payload: $0.payload) })
    for file in ["results.jsonl.zst", "dead-tokens.csv", "summary.json", "timeline.jsonl.zst", "report.html"]
    where !FileManager.default.fileExists(atPath: configuration.outputDirectory + "/" + file) {
        throw CheckFailure(description: "the campaign wrote no \(file) in \(configuration.outputDirectory)")
    }
    return (result, outcomes.withLock { $0 })
}

/// Every row has exactly one outcome, with the outcome the mock was set up to give.
func check(_ result: Campaign.Result, _ records: [ResultRecord], against rows: [Row]) throws {
    guard result.summary.rows == rows.count, result.summary.accountingHolds else {
        throw CheckFailure(description: "summary: \(result.summary.rows) rows, \(result.summary.counts.total) outcomes; expected \(rows.count) of each")
    }
    let byRow = Dictionary(grouping: records, by: \.row)
    for (index, row) in rows.enumerated() {
        let found = byRow[index + 1] ?? []
        guard found.count == 1 else {
            throw CheckFailure(description: "row \(index + 1) has \(found.count) outcomes, expected exactly one")
        }
        guard found[0].outcome == row.expected, found[0].deviceToken == row.deviceToken else {
            throw CheckFailure(description: "row \(index + 1): \(found[0].outcome) for \(found[0].deviceToken), expected \(row.expected) for \(row.deviceToken)")
        }
    }
    guard records.count == rows.count else {
        throw CheckFailure(description: "\(records.count) outcomes for \(rows.count) rows")
    }
}

do {
    let signingKey = try SigningKey.generate()
    let keyID = try ProviderToken.KeyID("EXAMPLE001")
    let teamID = try ProviderToken.TeamID("EXAMPLE002")

    var mockConfiguration = MockAPNsConfiguration()
    mockConfiguration.address = .loopback(port: 0)
    mockConfiguration.identity = .ephemeral(hosts: ["127.0.0.1"])
    mockConfiguration.authentication = .token(try TokenVerifier(signingKey: signingKey, keyID: keyID, teamID: teamID))
    mockConfiguration.topics = [topic]
    mockConfiguration.unregistered = [unregisteredToken: 1_700_000_000_000]
    let mock = try MockAPNsServer.start(mockConfiguration)
    defer { _ = try? mock.stop() }

    let (result, records) = try send(rows, to: mock, signingKey: signingKey, keyID: keyID, teamID: teamID)
    try check(result, records, against: rows)
    print("embedded campaign: \(rows.count) rows, \(records.count) outcomes, every row accounted for")
} catch {
    FileHandle.standardError.write(Data("embedded campaign failed: \(error)\n".utf8))
    exit(1)
}
