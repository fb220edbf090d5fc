import CampaignTestSupport
import APNs
import Foundation
import MockAPNs
import Synchronization
import Testing
import TestSupport
import Transport
@testable import Pipeline

/// `Campaign.run(rows:)`: a campaign from rows in memory, in this process, against mock APNs over
/// TLS on 127.0.0.1, with its outcomes delivered to the caller's callback besides the files.
@Suite(.serialized)
struct RowsCampaignTests {
    /// What one run amounted to: the result, every record the callback got (in call order), and
    /// the result log read back.
    struct Run {
        var result: Campaign.Result
        var delivered: [ResultRecord]
        var log: [ResultRecord]
    }

    /// The same settings as `InProcessCampaign`: token auth, the run's topic and payload.
    static func configuration(_ mocks: MockEndpoints, out: String, input: String = "") throws -> CampaignConfiguration {
        var configuration = CampaignConfiguration(
            inputPath: input, authentication: .token(try InProcessCampaign.tokenSource()), endpoints: mocks.endpoints,
            tls: try TLSContext.client(additionalTrust: .authority(mocks.authority)), outputDirectory: out)
        configuration.defaults = HeaderValues(topic: "com.example.app")
        configuration.defaultPayload = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
        configuration.connections = mocks.servers.count
        configuration.reactorThreads = 1
        return configuration
    }

    /// Runs `campaign` on another thread (`body` calls one of its `run`s there), with a deadline.
    static func run(_ configuration: CampaignConfiguration,
                    _ body: @escaping @Sendable (Campaign) throws -> Campaign.Result) throws -> Run {
        let delivered = Mutex<[ResultRecord]>([])
        let campaign = Campaign(configuration: configuration) { record in delivered.withLock { $0.append(record) } }
        let outcome = Mutex<Result<Campaign.Result, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let result = Result { try body(campaign) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        thread.start()
        guard done.wait(timeout: .now() + 60) == .success else {
            campaign.interrupt(signal: 15)
            _ = done.wait(timeout: .now() + 10)
            throw InProcessCampaign.CampaignTimedOut()
        }
        let result = try #require(outcome.withLock { $0 }).get()
        let reader = try ResultLogReader(path: configuration.outputDirectory + "/results.jsonl.zst")
        var log: [ResultRecord] = []
        while let record = try reader.next() { log.append(record) }
        return Run(result: result, delivered: delivered.withLock { $0 }, log: log)
    }

    /// Every row ends in exactly one outcome: in the summary, in the result log, and in the calls
    /// of the callback, which got the very records the log holds.
    static func checkAccounting(_ run: Run, rows: Int) {
        #expect(run.result.summary.rows == rows && run.result.summary.counts.accountsFor(rows: rows))
        #expect(run.log.count == rows)
        #expect(Set(run.log.map(\.row)) == Set(1...rows))
        #expect(run.delivered.count == rows, "the callback was called \(run.delivered.count) times for \(rows) rows")
        let logByRow = Dictionary(uniqueKeysWithValues: run.log.map { ($0.row, $0) })
        for record in run.delivered { #expect(logByRow[record.row] == asLogged(record), "row \(record.row)") }
    }

    /// `record` as the log writes it: latency to the microsecond.
    static func asLogged(_ record: ResultRecord) -> ResultRecord {
        var logged = record
        logged.latencyMs = record.latencyMs.map { ($0 * 1000).rounded() / 1000 }
        return logged
    }

    /// The rows of the test campaign: valid ones, and four bad ones a CSV file can hold too.
    static let badRows: [Int: CampaignRow] = [
        5: CampaignRow(deviceToken: "not-a-device-token"),
        9: CampaignRow(deviceToken: InProcessCampaign.token(9), payload: #"{"aps":"#),
        13: CampaignRow(deviceToken: InProcessCampaign.token(13), priority: "7"),
        17: CampaignRow(deviceToken: InProcessCampaign.token(17),
                        payload: #"{"aps":{"alert":""# + String(repeating: "x", count: 70_000) + #""}}"#),
    ]

    static func rows(_ count: Int) -> [CampaignRow] {
        (1...count).map { badRows[$0] ?? CampaignRow(deviceToken: InProcessCampaign.token($0)) }
    }

    /// The same rows as a CSV file: every field quoted, so nothing is trimmed.
    static func csv(_ rows: [CampaignRow]) -> String {
        func field(_ text: String?) -> String { text.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" } ?? "" }
        return "device_token,payload,priority\n"
            + rows.map { "\(field($0.deviceToken)),\(field($0.payload)),\(field($0.priority))\n" }.joined()
    }

    /// 60 rows from memory, four of them bad (a token that is not hex, a payload that is not JSON,
    /// priority 7, a payload over 64 KiB): every valid row is delivered, and each bad one is
    /// rejected with the reason the same row gets from a CSV file; the callback gets each row's
    /// record exactly once, the one the result log has.
    @Test func rowsFromMemoryAreDeliveredAndBadOnesRejectedAsTheirCSVLinesAre() throws {
        let mocks = try MockEndpoints([MockAPNsConfiguration(), MockAPNsConfiguration()])
        let directory = try TemporaryDirectory()
        let rows = Self.rows(60)

        let fromMemory = try Self.run(try Self.configuration(mocks, out: directory.path("memory"))) {
            try $0.run(rows: rows)
        }
        Self.checkAccounting(fromMemory, rows: 60)
        let input = try directory.write("campaign.csv", Self.csv(rows))
        let fromFile = try Self.run(try Self.configuration(mocks, out: directory.path("file"), input: input)) {
            try $0.run()
        }
        Self.checkAccounting(fromFile, rows: 60)

        let fileByRow = Dictionary(uniqueKeysWithValues: fromFile.log.map { ($0.row, $0) })
        for record in fromMemory.log {
            let expected = try #require(fileByRow[record.row])
            if Self.badRows[record.row] != nil {
                #expect(record.outcome == .rejected && record.reason != nil, "row \(record.row): \(record.jsonLine)")
                #expect(record.reason == expected.reason, "row \(record.row): \(record.reason ?? "-") from memory, \(expected.reason ?? "-") from the file")
            } else {
                #expect(record.outcome == .delivered, "row \(record.row): \(record.jsonLine)")
            }
            #expect(record.outcome == expected.outcome && record.deviceToken == expected.deviceToken)
        }
        let reasons = fromMemory.log.filter { $0.outcome == .rejected }.map { "\($0.row) \($0.reason ?? "-")" }
        #expect(reasons.sorted() == ["13 BadPriority", "17 FieldTooLarge", "5 BadDeviceToken", "9 InvalidPayload"])
        #expect(fromMemory.result.exitStatus == 0)
        #expect(mocks.servers.map { $0.stats().requests }.reduce(0, +) >= 2 * 56)
    }

    /// A sequence that is not a collection (no count ahead) is read once, like a stream: its rows
    /// are numbered in order and every one is recorded; the summary counts them as they come.
    @Test func aSequenceThatIsNotACollectionIsReadOnceAndEveryRowRecorded() throws {
        let mocks = try MockEndpoints([MockAPNsConfiguration()])
        let directory = try TemporaryDirectory()
        let run = try Self.run(try Self.configuration(mocks, out: directory.path("out"))) { campaign in
            let rows = sequence(state: 0) { (row: inout Int) -> CampaignRow? in
                row += 1
                return row <= 5_000 ? CampaignRow(deviceToken: InProcessCampaign.token(row)) : nil
            }
            return try campaign.run(rows: rows)
        }
        Self.checkAccounting(run, rows: 5_000)
        #expect(run.log.allSatisfy { $0.outcome == .delivered && $0.deviceToken == InProcessCampaign.token($0.row) })
    }

    /// Token auth and no run topic: a collection with a row that has no topic stops the run before
    /// anything is sent, as a file's prescan does, and names the row.
    @Test func aCollectionRowWithoutATopicStopsTheRunBeforeAnythingIsSent() throws {
        let mocks = try MockEndpoints([MockAPNsConfiguration()])
        let directory = try TemporaryDirectory()
        var configuration = try Self.configuration(mocks, out: directory.path("out"))
        configuration.defaults = HeaderValues()
        var rows = (1...10).map { CampaignRow(deviceToken: InProcessCampaign.token($0), topic: "com.example.app") }
        rows[6].topic = nil
        let campaign = Campaign(configuration: configuration)
        #expect {
            _ = try campaign.run(rows: rows)
        } throws: { error in
            guard case Campaign.SetupError.input(.emptyTopic(_, let row)) = error else { return false }
            return row == 7
        }
        #expect(mocks.servers[0].stats().requests == 0)
        #expect(!FileManager.default.fileExists(atPath: directory.path("out/results.jsonl.zst")))
    }

    /// Token auth and no run topic, rows from a sequence that can be read only once (no count
    /// ahead, as a stream has no prescan): the row without a topic is rejected `MissingTopic`,
    /// the others are delivered.
    @Test func aSequenceRowWithoutATopicIsRejectedMissingTopic() throws {
        let mocks = try MockEndpoints([MockAPNsConfiguration()])
        let directory = try TemporaryDirectory()
        var configuration = try Self.configuration(mocks, out: directory.path("out"))
        configuration.defaults = HeaderValues()
        let run = try Self.run(configuration) { campaign in
            let rows = (1...10).lazy.map { CampaignRow(deviceToken: InProcessCampaign.token($0), topic: $0 == 4 ? nil : "com.example.app") }
            return try campaign.run(rows: AnySequence(rows))
        }
        Self.checkAccounting(run, rows: 10)
        for record in run.log {
            if record.row == 4 {
                #expect(record.outcome == .rejected && record.reason == "MissingTopic", "\(record.jsonLine)")
            } else {
                #expect(record.outcome == .delivered, "\(record.jsonLine)")
            }
        }
    }

    /// No rows: the run ends at once with an empty result log and a summary of 0 rows, exit 0.
    @Test func anEmptyCollectionOfRowsEndsAtOnceWithEmptyFiles() throws {
        let mocks = try MockEndpoints([MockAPNsConfiguration()])
        let directory = try TemporaryDirectory()
        let run = try Self.run(try Self.configuration(mocks, out: directory.path("out"))) {
            try $0.run(rows: [CampaignRow]())
        }
        #expect(run.result.summary.rows == 0 && run.result.summary.counts.total == 0)
        #expect(run.log.isEmpty && run.delivered.isEmpty)
        #expect(run.result.exitStatus == 0)
        #expect(FileManager.default.fileExists(atPath: directory.path("out/summary.json")))
    }

    /// `resume` reads the input again; rows from memory cannot be: refused, nothing written.
    @Test func resumeWithRowsFromMemoryIsRefused() throws {
        let mocks = try MockEndpoints([MockAPNsConfiguration()])
        let directory = try TemporaryDirectory()
        var configuration = try Self.configuration(mocks, out: directory.path("out"))
        configuration.resume = true
        #expect(throws: Campaign.SetupError.self) {
            _ = try Campaign(configuration: configuration).run(rows: [CampaignRow(deviceToken: InProcessCampaign.token(1))])
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path("out")))
        #expect(mocks.servers[0].stats().requests == 0)
    }
}
