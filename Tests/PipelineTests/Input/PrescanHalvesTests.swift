import Foundation
import Testing
import TestSupport
@testable import Pipeline

/// A large file's prescan is made by two threads, one a half (`PrescanHalves`): whatever the split,
/// it must count the rows, find the duplicate keys' suspects, count the credential groups' rows and
/// name a bad line exactly as the one-thread pass does. Small sizes here make the tests' files
/// "large" and hand keys over every few kilobytes, so that many rounds are crossed.
@Suite struct PrescanHalvesTests {
    /// Two threads for any file on any machine (one core or more: correct either way), keys handed
    /// over every 4 KiB.
    static let small = PrescanHalves.Sizes(minimumBytes: 0, roundBytes: 4096, minimumCores: 1)
    static let topic = DuplicateTokensTests.topic

    static func token(_ index: Int) -> String { String(format: "%064x", index &* 2_654_435_761 + 1) }

    /// `rows` lines with duplicate keys of every kind: within the first half, within the second,
    /// across the halves, and the whole list written twice (the same keys at the same place in
    /// each half); payloads with quotes, commas and `""`; CRLF line ends when asked.
    static func campaign(rows: Int, crlf: Bool = false) -> String {
        var lines: [String] = []
        for half in 0..<2 {
            for index in 0..<rows / 2 {
                var token = token(index)  // the second half: the list again, each key at the same place
                if index % 97 == 5 { token = Self.token(index - 3) }  // a copy within the half
                if half == 1 && index % 53 == 11 { token = Self.token(rows + index) }  // not a copy
                let topic = index % 3 == 0 ? "" : "\"\(Self.topic)\""
                lines.append(half == 0 ? "\(token),\(topic),\"{\"\"aps\"\":{\"\"alert\"\":\"\"row \(index), hi\"\"}}\""
                                       : "\(token),\(topic),{}")
            }
        }
        let end = crlf ? "\r\n" : "\n"
        return "device_token,topic,payload" + end + lines.joined(separator: end) + end
    }

    static func prescan(_ path: String, halves: PrescanHalves.Sizes, chunkSize: Int = 1000) throws -> PrescanResult {
        try Prescan.run(path: path, chunkSize: chunkSize, duplicates: DuplicateScanRequest(defaultTopic: topic, bloomBytes: 1 << 20),
                        halves: halves)
    }

    @Test(arguments: [false, true])
    func twoThreadsCountAndSuspectAsOneThreadDoes(crlf: Bool) throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv", Self.campaign(rows: 4000, crlf: crlf))
        let one = try Self.prescan(path, halves: .never)
        let reference = try Self.prescan(path, halves: .never, chunkSize: 256 * 1024)
        let two = try Self.prescan(path, halves: Self.small)
        #expect(one.rows == 4000 && two.rows == 4000 && reference.rows == 4000)
        // The halves agreed here (no fallback to one thread): the header and 4,000 rows.
        #expect(PrescanHalves.count(path: path, chunkSize: 1000, roundBytes: 4096, scans: nil) == .counted(records: 4001))
        let suspects = try #require(two.duplicateSuspects)
        for other in [one, reference] {
            let differing = Set(suspects).symmetricDifference(other.duplicateSuspects ?? [])
            #expect(differing.isEmpty && suspects.count == other.duplicateSuspects?.count, "\(differing.count) suspects differ")
        }
        // Every duplicated key is a suspect (the reader confirms each exactly).
        let keys = try DuplicateTokensTests.readerHashes(path)
        let repeated = Dictionary(keys.map { ($0, 1) }, uniquingKeysWith: +).filter { $0.value > 1 }.keys
        #expect(repeated.count > 1000)
        #expect(Set(repeated).subtracting(suspects).isEmpty)
    }

    @Test func aQuotedLineBreakWhereTheHalvesMeetFallsBackToOneThread() throws {
        let directory = try TemporaryDirectory()
        // The first line break after the middle is inside the quoted payload of row 1.
        let csv = "device_token,payload\n\(Self.token(1)),\"" + String(repeating: "a", count: 1000) + "\n"
            + String(repeating: "b", count: 10) + "\"\n\(Self.token(2)),{}\n\(Self.token(1)),{}\n"
        let path = try directory.write("c.csv", csv)
        #expect(PrescanHalves.count(path: path, chunkSize: 100, roundBytes: 512, scans: nil) == nil)
        let two = try Self.prescan(path, halves: Self.small, chunkSize: 100)
        #expect(two.rows == 3)
        #expect(two.duplicateSuspects?.count == 1)
        #expect(two.duplicateSuspects == (try Self.prescan(path, halves: .never)).duplicateSuspects)
    }

    @Test func aBadLineInTheSecondHalfIsNamedAsByOneThread() throws {
        let directory = try TemporaryDirectory()
        var lines = (0..<400).map { "\(Self.token($0)),\(Self.topic),{}" }
        lines[300] = "\(Self.token(300)),com.x\"y,{}"  // a quote inside an unquoted field
        let path = try directory.write("c.csv", "device_token,topic,payload\n" + lines.joined(separator: "\n") + "\n")
        // The first half stops with the second, not knowing whether the second began at a record:
        // the one-thread pass decides (and finds the line).
        #expect(PrescanHalves.count(path: path, chunkSize: 1000, roundBytes: 4096, scans: nil) == nil)
        let one = #expect(throws: InputFileError.self) { try Self.prescan(path, halves: .never) }
        let two = #expect(throws: InputFileError.self) { try Self.prescan(path, halves: Self.small) }
        #expect(one != nil && "\(one!)" == "\(two!)")
        #expect("\(two!)".contains("302"))
    }

    @Test func eachGroupsRowsAreCountedAsByOneThread() throws {
        let directory = try TemporaryDirectory()
        let body = GroupRowTallyTests.csv.split(separator: "\n", omittingEmptySubsequences: true).dropFirst()
        let csv = GroupRowTallyTests.csv.split(separator: "\n")[0] + "\n"
            + Array(repeating: body.joined(separator: "\n"), count: 150).joined(separator: "\n") + "\n"
        let path = try directory.write("campaign.csv", String(csv))
        let configuration = try GroupRowTallyTests.configuration(path)
        var tallies: [GroupRowTally] = []
        for halves in [PrescanHalves.Sizes.never, Self.small] {
            let tally = try #require(Campaign.groupColumns(configuration).prescanCount)
            let result = try Prescan.run(path: path, chunkSize: 1000,
                                         duplicates: DuplicateScanRequest(defaultTopic: "com.example.a", bloomBytes: 1 << 16),
                                         groups: tally, halves: halves)
            #expect(result.rows == 11 * 150)
            #expect(tally.isComplete)
            tallies.append(tally)
        }
        #expect(tallies[0].rows == tallies[1].rows)
        #expect(tallies[0].rows.reduce(0, +) == 8 * 150)
        #expect(tallies[0].missing == tallies[1].missing)
    }
}
