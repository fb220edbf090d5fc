import ByteScan
import APNs
import Testing
import TestSupport
import Transport
import ZstdFile
@testable import Pipeline

/// A several-credential run's records: written in place with their lane's fields, and counted by
/// lane, they must come out as the general path writes and counts them.
@Suite struct LabelledLinesTests {
    static let labels = RecordLabels(lanes: [(.production, "KEYONE0001"), (.sandbox, "KEYTWO0002"), (.production, "cert \"CN\" é")])

    static func records(_ count: Int) -> [RowResult] {
        var random = SeededRandom(seed: 41)
        return (0..<count).map { index in
            let escaping = random.next() % 10 == 0
            return RowResult(
                row: index + 1, deviceToken: Array((escaping ? "tok\"\(index)" : "0a1b2c\(index)").utf8)[...],
                outcome: Outcome.allCases[Int(random.next() % UInt64(Outcome.allCases.count))],
                status: [0, 200, 410][Int(random.next() % 3)], reason: random.next() % 2 == 0 ? nil : "BadDeviceToken",
                apnsID: InlineText("5e5ac3a4-6c6b-4b7a-9e8b-1d2c3b4a5f6e"), attempts: 1, latencyMs: 1.5, endpoint: "h:1",
                uniqueID: random.next() % 3 == 0 ? UUIDBytes("0d6e2ba9-2d63-4e63-9a6c-0d4a2c40cda5") : nil,
                lane: UInt16(random.next() % 5), environmentCode: UInt8(random.next() % 3),
                fallbackFrom: random.next() % 4 == 0 ? UInt8(random.next() % 3) : 0)
        }
    }

    @Test func aLabelledLineWrittenInPlaceIsTheLineTheGeneralPathWrites() throws {
        let directory = try TemporaryDirectory()
        let log = try ResultLog(path: directory.path("results.jsonl.zst"), maxFrameBytes: 50_000)
        log.labels = Self.labels
        var expected: [UInt8] = []
        for record in Self.records(3000) {
            // The general path: the record with its labels as strings, each escaped as it is written.
            var labelled = record.record
            (labelled.environment, labelled.keyID, labelled.environmentFallbackFrom) = Self.labels.fields(of: record)
            labelled.appendJSONLine(to: &expected)
            try log.append(record)
        }
        try log.close()
        #expect(try decodedLog(at: directory.path("results.jsonl.zst")) == expected)
    }

    @Test func countsByLaneFoldIntoWhatCountingEachRecordGives() {
        var tally = GroupCountsTally(lanes: 3)
        var direct = GroupCounts()
        for record in Self.records(5000) where record.lane | UInt16(record.environmentCode | record.fallbackFrom) != 0 {
            tally.add(record.outcome, lane: record.lane, environmentCode: record.environmentCode, fallbackFrom: record.fallbackFrom)
            let fields = Self.labels.fields(of: record)
            direct.add(record.outcome, environment: fields.environment, keyID: fields.keyID, fallbackFrom: fields.fallbackFrom)
        }
        var folded = GroupCounts()
        tally.fold(into: &folded, labels: Self.labels)
        #expect(!direct.moves.isEmpty && direct.byKey.count == 3 && direct.byEnvironment.count == 2)
        #expect(folded == direct)
    }
}
