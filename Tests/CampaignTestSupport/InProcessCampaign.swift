import APNs
import Foundation
import MockAPNs
import Pipeline
import Synchronization
import TestSupport
import Transport

/// Mock APNs servers on 127.0.0.1 that share one certificate authority, so that one campaign can
/// use each of them as an endpoint. Stops every server when it goes away.
public final class MockEndpoints {
    public let authority: CertificateAuthority
    public let servers: [MockAPNsServer]

    public init(_ configurations: [MockAPNsConfiguration]) throws {
        authority = try CertificateAuthority()
        let identity = try authority.issueServerCertificate(hosts: ["127.0.0.1"])
        var started: [MockAPNsServer] = []
        for var configuration in configurations {
            configuration.identity = .identity(identity)
            configuration.authentication = .tokenPresenceOnly
            do {
                started.append(try MockAPNsServer.start(configuration))
            } catch {
                for server in started { _ = try? server.stop() }
                throw error
            }
        }
        servers = started
    }

    deinit { for server in servers { _ = try? server.stop() } }

    public var endpoints: [Endpoint] { servers.map { Endpoint(host: "127.0.0.1", port: $0.port) } }
}

/// A campaign run in this process (reader, workers and their connection pools, writer) against
/// mock endpoints, with what it wrote read back. Shared by PipelineTests and ReportTests (which
/// attaches the exporters through `configure`).
public struct InProcessCampaign {
    public var result: Campaign.Result
    public var records: [ResultRecord]

    /// The 64-hex-digit token of row `row` (rows count from 1, as the result log does).
    public static func token(_ row: Int) -> String {
        let hex = String(row, radix: 16)
        return String(repeating: "0", count: 64 - hex.count) + hex
    }

    /// Sends `rows` rows to `mocks` with `configure`'s settings; `whileRunning` runs on this thread
    /// while the campaign runs on another. Checks the accounting every run must keep: in the
    /// summary, and in the result log unless `prepareOutput` (given the output directory before
    /// the run) made it unreadable (then `records` is empty).
    public static func run(rows: Int, mocks: MockEndpoints, source: TokenSource? = nil,
                    configure: (inout CampaignConfiguration) -> Void = { _ in },
                    prepareOutput: ((String) throws -> Void)? = nil,
                    beforeRun: (Campaign) -> Void = { _ in },
                    whileRunning: (Campaign) -> Void = { _ in },
                    afterRun: (String) throws -> Void = { _ in }) throws -> InProcessCampaign {
        let directory = try TemporaryDirectory()
        var csv = "device_token\n"
        for row in 1...rows { csv += token(row) + "\n" }
        let input = try directory.write("campaign.csv", csv)
        let source = try source ?? tokenSource()
        var configuration = CampaignConfiguration(
            inputPath: input, authentication: .token(source), endpoints: mocks.endpoints,
            tls: try TLSContext.client(additionalTrust: .authority(mocks.authority)),
            outputDirectory: directory.path("out"))
        configuration.defaults = HeaderValues(topic: "com.example.app")
        configuration.defaultPayload = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
        configuration.connections = mocks.servers.count
        configuration.reactorThreads = 1
        configure(&configuration)
        if let prepareOutput {
            try FileManager.default.createDirectory(atPath: configuration.outputDirectory, withIntermediateDirectories: true)
            try prepareOutput(configuration.outputDirectory)
        }

        let campaign = Campaign(configuration: configuration)
        beforeRun(campaign)
        let outcome = Mutex<Result<Campaign.Result, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let result = Result { try campaign.run() }
            outcome.withLock { $0 = result }
            done.signal()
        }
        thread.start()
        whileRunning(campaign)
        guard done.wait(timeout: .now() + 60) == .success else {
            campaign.interrupt(signal: 15)
            _ = done.wait(timeout: .now() + 10)
            throw CampaignTimedOut()
        }
        guard let finished = outcome.withLock({ $0 }) else { throw CampaignTimedOut() }
        let result = try finished.get()
        // Every row ends in exactly one outcome.
        guard result.summary.rows == rows && result.summary.counts.accountsFor(rows: rows) else {
            throw AccountingBroken(description: "summary: \(result.summary.rows) rows, \(result.summary.counts.total) outcomes, expected \(rows)")
        }
        if prepareOutput != nil { return InProcessCampaign(result: result, records: []) }

        let log = try ResultLogReader(path: directory.path("out/results.jsonl.zst"))
        var records: [ResultRecord] = []
        while let record = try log.next() { records.append(record) }
        // Every row appears once in the result log.
        guard records.count == rows, Set(records.map(\.row)) == Set(1...rows) else {
            throw AccountingBroken(description: "the result log holds \(records.count) records for \(rows) rows")
        }
        if let wrong = records.first(where: { $0.deviceToken != token($0.row) }) {
            throw AccountingBroken(description: "row \(wrong.row) holds the token \(wrong.deviceToken)")
        }
        try afterRun(configuration.outputDirectory)
        return InProcessCampaign(result: result, records: records)
    }

    /// A provider token source with a fresh key (the mocks check only that a token is present).
    public static func tokenSource() throws -> TokenSource {
        try TokenSource(signingKey: try SigningKey.generate(), keyID: try .init("ABC123DEFG"),
                        teamID: try .init("DEF123GHIJ"))
    }

    public struct CampaignTimedOut: Error {
        public init() {}
    }

    /// A run that broke the accounting every run must keep; the calling test fails with it.
    public struct AccountingBroken: Error, CustomStringConvertible {
        public let description: String
    }
}
