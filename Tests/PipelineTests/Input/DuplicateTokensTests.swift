import CampaignTestSupport
import APNs
import Foundation
import MockAPNs
import Testing
import TestSupport
import Transport
@testable import Pipeline

/// Duplicate tokens: the prescan's Bloom suspects and the reader's exact check.
@Suite struct DuplicateTokensTests {
    static let topic = "com.example.app"

    /// The key hash the reader computes for a row read by `CSVSource` (libcsv's fields).
    static func readerHashes(_ path: String) throws -> [UInt64] {
        let source = try CSVSource(path: path)
        var hashes: [UInt64] = []
        while let row = try source.next() {
            let token = Array(row.field(.deviceToken) ?? [])
            let topic = row.field(.topic).flatMap { $0.isEmpty ? nil : Array($0) } ?? Array(Self.topic.utf8)
            hashes.append(DuplicateKeyHash.combine(token: token.withUnsafeBytes { DuplicateKeyHash.token($0) },
                                                   topic: topic.withUnsafeBytes { DuplicateKeyHash.topic($0) }))
        }
        return hashes
    }

    @Test func thePrescanHashesTheTokenAndTopicFieldsAsTheReaderReadsThemWhateverTheQuotingAndChunks() throws {
        let directory = try TemporaryDirectory()
        // Each key twice, written differently: quoted, spaced, upper case, `""` in a quoted topic,
        // a topic given as the run's own; the reader's fields are libcsv's.
        let token = String(repeating: "ab", count: 32), other = String(repeating: "0f", count: 32)
        let csv = """
            payload,device_token,topic
            {},\(token),
            {}, \(token.uppercased()) ,\(Self.topic)
            "{""a"":1}","\(other)","com.x""y, z"
            {},\(other),"com.x""y, z"\("  ")
            {},\(other)\t,  "com.q"\("\r")
            {},"\(other.uppercased())",com.q
            {},\(token),com.solo
            """
        let path = try directory.write("c.csv", csv)
        let reader = try Self.readerHashes(path)
        let expected = Set([reader[0], reader[2], reader[4]])
        #expect(reader[0] == reader[1] && reader[2] == reader[3] && reader[4] == reader[5] && expected.count == 3)
        for chunkSize in [1, 2, 3, 7, 16, 64, 256 * 1024] {
            let result = try Prescan.run(path: path, chunkSize: chunkSize,
                                         duplicates: DuplicateScanRequest(defaultTopic: Self.topic, bloomBytes: 1 << 20))
            #expect(result.rows == 7)
            #expect(Set(try #require(result.duplicateSuspects)) == expected, "chunk size \(chunkSize)")
        }
    }

    /// The filter grows with the input (20 bits for each 64 bytes, the shortest row a token makes),
    /// from 1 MiB up to the run's largest (20 MiB).
    @Test func theFilterIsSizedByTheInputWithinItsBounds() {
        let request = DuplicateScanRequest(defaultTopic: nil, bloomBytes: 20 << 20)
        #expect(request.bloomBytes(inputBytes: 1000) == 1 << 20)
        #expect(request.bloomBytes(inputBytes: 277_000_000) == 277_000_000 / 64 * 20 / 8)  // 1M rows: ~10.3 MiB
        #expect(request.bloomBytes(inputBytes: 2_770_000_000) == 20 << 20)  // 10M rows
        #expect(DuplicateScanRequest(defaultTopic: nil, bloomBytes: 64).bloomBytes(inputBytes: 1 << 30) == 64)
    }

    @Test func aPrescanWithATopicColumnEveryRowMustFillStillFindsTheSuspects() throws {
        let directory = try TemporaryDirectory()
        let token = String(repeating: "cd", count: 32)
        let path = try directory.write("c.csv", "device_token,topic\n\(token),com.a\n\(token),com.a\n\(token),com.b\n")
        let result = try Prescan.run(path: path, requiresTopic: true,
                                     duplicates: DuplicateScanRequest(defaultTopic: nil, bloomBytes: 1 << 20))
        #expect(result.duplicateSuspects?.count == 1)
    }

    /// The prescan inserts each key into the filter a few rows after it fetched its block: a copy
    /// within those few rows, and one in the very last row (inserted when the scan finishes), are
    /// suspects all the same.
    @Test func copiesCloserThanTheInsertDelayAndInTheLastRowAreSuspects() throws {
        let directory = try TemporaryDirectory()
        let tokens = (0..<40).map { String(format: "%064x", $0 + 1) }
        var rows = tokens
        rows.insert(tokens[3], at: 5)  // 1 row after its first: within the delay
        rows.append(tokens[30])  // the last row: only finish() inserts it
        let path = try directory.write("c.csv", "device_token\n" + rows.map { $0 + "\n" }.joined())
        let hashes = try Self.readerHashes(path)
        let result = try Prescan.run(path: path, chunkSize: 64,
                                     duplicates: DuplicateScanRequest(defaultTopic: Self.topic, bloomBytes: 1 << 20))
        #expect(DuplicateTokensScan.insertDelay > 1)
        #expect(Set(try #require(result.duplicateSuspects)) == [hashes[3], hashes[30 + 1]])
    }

    /// On 2 MiB pages (a large input) the filter holds what it held on 4 KiB ones.
    @Test func aFilterOnHugePagesFindsEveryKeyInsertedBefore() {
        let bloom = DuplicateBloom(bytes: 4 << 20, hugePages: true)
        var generator = SystemRandomNumberGenerator()
        let keys = (0..<20000).map { _ in generator.next() as UInt64 }
        let firstTime = keys.filter { bloom.insert($0) }.count
        #expect(firstTime < 10)
        #expect(keys.allSatisfy { bloom.insert($0) })
    }

    /// The prescan reads the header alone in small chunks; one longer than such a chunk is read
    /// whole, and the columns after it (the topic here) are still found where they are.
    @Test func aHeaderLongerThanTheHeaderReadsChunkStillLocatesTheColumns() throws {
        let directory = try TemporaryDirectory()
        let filler = (1...3000).map { "column_\($0)" }
        let header = (["device_token"] + filler + ["topic"]).joined(separator: ",")
        #expect(header.utf8.count > Prescan.headerChunkSize)
        let token = String(repeating: "ef", count: 32)
        let empties = String(repeating: ",", count: filler.count)
        let path = try directory.write("c.csv", "\(header)\n\(token)\(empties),com.a\n\(token)\(empties),com.b\n"
                                       + "\(token)\(empties),com.a\n")
        let result = try Prescan.run(path: path, duplicates: DuplicateScanRequest(defaultTopic: nil, bloomBytes: 1 << 20))
        #expect(result.rows == 3)
        #expect(result.header.fieldCount == filler.count + 2)
        #expect(result.header.has(.topic))
        // Rows 1 and 3 share token and topic; row 2's other topic makes it another notification.
        #expect(result.duplicateSuspects?.count == 1)
    }

    /// Rows 1...`rows` with distinct tokens, plus copies: row `rows + k` repeats row `k`'s token.
    static func campaign(rows: Int, copies: Int) -> String {
        var csv = "device_token\n"
        for row in 1...rows { csv += InProcessCampaign.token(row) + "\n" }
        for row in 1...copies { csv += InProcessCampaign.token(row).uppercased() + "\n" }
        return csv
    }

    static func run(csv: String, configure: (inout CampaignConfiguration) -> Void) throws -> (Campaign.Result, [ResultRecord]) {
        let directory = try TemporaryDirectory()
        let mocks = try MockEndpoints([MockAPNsConfiguration()])
        var configuration = CampaignConfiguration(
            inputPath: try directory.write("c.csv", csv), authentication: .token(try InProcessCampaign.tokenSource()),
            endpoints: mocks.endpoints, tls: try TLSContext.client(additionalTrust: .authority(mocks.authority)),
            outputDirectory: directory.path("out"))
        configuration.defaults = HeaderValues(topic: Self.topic)
        configuration.defaultPayload = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
        configuration.connections = 1
        configuration.reactorThreads = 1
        configure(&configuration)
        let result = try Campaign(configuration: configuration).run()
        let log = try ResultLogReader(path: directory.path("out/results.jsonl.zst"))
        var records: [ResultRecord] = []
        while let record = try log.next() { records.append(record) }
        return (result, records)
    }

    @Test func bloomFalseHitsNeverRejectARowThatIsNotADuplicate() throws {
        let rows = 3000, copies = 40
        let csv = Self.campaign(rows: rows, copies: copies)
        // A 64-byte filter is full after a few rows: nearly every row is a suspect, so the exact
        // check alone decides.
        let directory = try TemporaryDirectory()
        let prescan = try Prescan.run(path: try directory.write("c.csv", csv),
                                      duplicates: DuplicateScanRequest(defaultTopic: Self.topic, bloomBytes: 64))
        #expect(try #require(prescan.duplicateSuspects).count > rows / 2)

        for noPrescan in [false, true] {
            let (result, records) = try Self.run(csv: csv) {
                $0.duplicateFilterBytes = 64
                $0.prescan = !noPrescan
            }
            #expect(result.summary.rows == rows + copies && result.summary.counts.accountsFor(rows: rows + copies))
            #expect(Set(records.map(\.row)) == Set(1...(rows + copies)) && records.count == rows + copies)
            let rejected = records.filter { $0.outcome == .rejected }
            #expect(rejected.count == copies)
            for record in rejected {
                #expect(record.reason == "DuplicateToken" && record.duplicateOf == record.row - rows)
            }
            #expect(records.filter { $0.outcome == .delivered }.count == rows)
        }
    }

    @Test func rowsFromMemoryFindDuplicatesWithoutAPrescan() throws {
        let directory = try TemporaryDirectory()
        let mocks = try MockEndpoints([MockAPNsConfiguration()])
        var configuration = CampaignConfiguration(
            authentication: .token(try InProcessCampaign.tokenSource()), endpoints: mocks.endpoints,
            tls: try TLSContext.client(additionalTrust: .authority(mocks.authority)), outputDirectory: directory.path("out"))
        configuration.defaults = HeaderValues(topic: Self.topic)
        configuration.defaultPayload = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
        configuration.connections = 1
        configuration.reactorThreads = 1
        let token = InProcessCampaign.token(7)
        let rows = [CampaignRow(deviceToken: token), CampaignRow(deviceToken: token.uppercased()),
                    CampaignRow(deviceToken: token, topic: "com.example.app.other")]
        let result = try Campaign(configuration: configuration).run(rows: rows)
        #expect(result.summary.rows == 3)
        #expect(result.summary.counts[.rejected] == 1)
        #expect(result.summary.byReason["DuplicateToken"] == 1)
    }

    @Test func aDuplicateRecordNamesItsFirstRowAndReadsBack() throws {
        let record = ResultRecord(row: 9, deviceToken: "AB", outcome: .rejected, reason: "DuplicateToken", duplicateOf: 2)
        #expect(record.jsonLine.hasSuffix(#","endpoint":null,"duplicate_of":2}"# + "\n"))
        #expect(!ResultRecord(row: 1, deviceToken: "ab", outcome: .delivered).jsonLine.contains("duplicate_of"))
        let parsed = try ResultRecordParser.parse(Array(record.jsonLine.utf8)[...])
        #expect(parsed == record)
    }
}
