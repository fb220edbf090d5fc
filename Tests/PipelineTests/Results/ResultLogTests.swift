import Foundation
import Testing
import TestSupport
@testable import Pipeline

@Suite struct ResultLogTests {
    static func sampleRecords(_ count: Int, start: Int = 1) -> [ResultRecord] {
        (start..<start + count).map { row in
            switch row % 4 {
            case 0:
                ResultRecord(row: row, deviceToken: "tok\(row)", outcome: .delivered, status: 200,
                             apnsID: "id-\(row)", attempts: 1, latencyMs: Double(row % 50) * 0.25 + 0.5,
                             endpoint: "api.push.apple.com:443")
            case 1:
                ResultRecord(row: row, deviceToken: "tok\(row)", outcome: .unregistered, status: 410,
                             reason: "Unregistered", attempts: 1, unregisteredAt: 1_767_225_600_000 + Int64(row),
                             latencyMs: 2.5, endpoint: "api.push.apple.com:443", retriedAfterConnectionLoss: row % 3 == 0)
            case 2:
                ResultRecord(row: row, deviceToken: "bad \"tok\"\n\(row) é", outcome: .rejected, reason: "BadDeviceToken")
            default:
                ResultRecord(row: row, deviceToken: "tok\(row)", outcome: .gaveUp, status: 503,
                             reason: "ServiceUnavailable", attempts: 5, latencyMs: 12.0, endpoint: "127.0.0.1:2197")
            }
        }
    }

    func readAll(_ path: String) throws -> (records: [ResultRecord], cut: CutFrame?) {
        let reader = try ResultLogReader(path: path)
        var records: [ResultRecord] = []
        while let record = try reader.next() { records.append(record) }
        return (records, reader.cutFrame)
    }

    func expectedText(_ records: [ResultRecord]) -> String { records.map(\.jsonLine).joined() }

    @Test func recordsReadBackEqualAcrossSeveralFrames() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("results.jsonl.zst")
        let log = try ResultLog(path: path, maxFrameBytes: 4096)
        let records = Self.sampleRecords(500)
        for record in records { try log.append(record) }
        try log.close()
        #expect(log.framesWritten > 5)
        let back = try readAll(path)
        #expect(back.records == records)
        #expect(back.cut == nil)
    }

    @Test func theZstdToolDecodesTheLogToExactlyTheLines() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("results.jsonl.zst")
        let log = try ResultLog(path: path, maxFrameBytes: 2048)
        let records = Self.sampleRecords(100)
        for record in records { try log.append(record) }
        try log.close()
        let decoded = try Command.tool("zstd", ["-dc", path])
        #expect(decoded.status == 0)
        #expect(decoded.stdout == expectedText(records))
    }

    @Test func aFrameIsWrittenWhenTheIntervalPassesAndNotBefore() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("results.jsonl.zst")
        let start = ContinuousClock.now
        let log = try ResultLog(path: path, now: start)
        try log.append(Self.sampleRecords(1)[0])
        // A tenth of a second: a kill -9 loses at most that much of the answers the writer has.
        try log.flushIfDue(now: start + .milliseconds(99))
        #expect(log.framesWritten == 0)
        try log.flushIfDue(now: start + .milliseconds(100))
        #expect(log.framesWritten == 1)
        // A crash now (no close) still leaves a decodable file.
        let decoded = try Command.tool("zstd", ["-dc", path])
        #expect(decoded.status == 0)
        #expect(decoded.stdout == Self.sampleRecords(1)[0].jsonLine)
        try log.close()
    }

    @Test func aCutLastFrameIsSkippedAndMeasured() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("results.jsonl.zst")
        let log = try ResultLog(path: path)
        let complete = Self.sampleRecords(300)
        for record in complete { try log.append(record) }
        try log.flush()
        let sizeAfterComplete = try directory.read("results.jsonl.zst").count
        for record in Self.sampleRecords(300, start: 301) { try log.append(record) }
        try log.close()
        let whole = try directory.read("results.jsonl.zst")
        let lastFrame = whole.count - sizeAfterComplete
        let cutAt = sizeAfterComplete + lastFrame / 2
        let cutPath = try directory.write("cut.jsonl.zst", bytes: Array(whole.prefix(cutAt)))

        let back = try readAll(cutPath)
        #expect(back.records == complete)
        #expect(back.cut == CutFrame(frame: 2, bytes: cutAt - sizeAfterComplete))

        let decoded = try Command.tool("zstd", ["-dc", cutPath])
        #expect(decoded.status != 0)
        #expect(decoded.stdout.hasPrefix(expectedText(complete)))
    }

    @Test func aReaderAskedForTheCutFrameYieldsItsCompleteLinesAsZstdDecodesThem() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("results.jsonl.zst")
        let log = try ResultLog(path: path, maxFrameBytes: 8 << 20)
        let complete = Self.sampleRecords(300)
        for record in complete { try log.append(record) }
        try log.flush()
        let sizeAfterComplete = try directory.read("results.jsonl.zst").count
        // Over a megabyte in the last frame: several zstd blocks, so a cut leaves whole ones.
        for record in Self.sampleRecords(8000, start: 301) { try log.append(record) }
        try log.close()
        let whole = try directory.read("results.jsonl.zst")
        let cutAt = sizeAfterComplete + (whole.count - sizeAfterComplete) * 7 / 10
        let cutPath = try directory.write("cut.jsonl.zst", bytes: Array(whole.prefix(cutAt)))

        let decoded = try Command.tool("zstd", ["-dc", cutPath]).stdoutBytes
        let completeLines = decoded.filter { $0 == 10 }.count
        let partial = decoded.count - ((decoded.lastIndex(of: 10) ?? -1) + 1)
        #expect(completeLines > complete.count, "the cut frame still decodes to lines")

        let reader = try ResultLogReader(path: cutPath, readsCutFrame: true)
        var records: [ResultRecord] = []
        while let record = try reader.next() { records.append(record) }
        #expect(records.count == completeLines)
        #expect(records == Self.sampleRecords(completeLines))
        #expect(reader.cutFrame == CutFrame(frame: 2, bytes: cutAt - sizeAfterComplete,
                                            recordsRead: completeLines - complete.count, incompleteLineBytes: partial))
        // Resume's reader (the default) still stops at the last complete frame: it truncates there.
        let back = try readAll(cutPath)
        #expect(back.records == complete)
        #expect(back.cut == CutFrame(frame: 2, bytes: cutAt - sizeAfterComplete))
    }

    @Test func anEmptyLogHasNoRecords() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("results.jsonl.zst")
        try ResultLog(path: path).close()
        let back = try readAll(path)
        #expect(back.records.isEmpty)
        #expect(back.cut == nil)
    }

    @Test func theReaderToleratesAnyFieldOrderAndUnknownKeys() throws {
        let line = #"{"outcome":"bad_token","extra":{"a":[1,"}"]},"row":7,"device_token":"x\u00e9\ud83c\udf89","status":400,"reason":"BadDeviceToken","latency_ms":1.25}"#
        let record = try ResultRecordParser.parse(ArraySlice(line.utf8))
        #expect(record == ResultRecord(row: 7, deviceToken: "xé🎉", outcome: .badToken, status: 400,
                                       reason: "BadDeviceToken", latencyMs: 1.25))
    }

    @Test func aLineThatIsNotARecordNamesItsLine() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("r.jsonl", Self.sampleRecords(1)[0].jsonLine + "{\"row\":2}\n")
        let compressed = try ZstdCLI.compress(path)
        #expect(throws: ResultLogError.self) { try readAll(compressed) }
        do { _ = try readAll(compressed) } catch { #expect("\(error)".contains("line 2")) }
    }

    /// The log's faster match finder (`targetLength`) would make zstd store literals raw; the log
    /// forces them Huffman-coded. Random hex tokens and ids are most of a line's literals: coded,
    /// they take about half their bytes, raw all of them.
    @Test func hexTokensAndIdsStayHuffmanCodedInTheLog() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("results.jsonl.zst")
        let log = try ResultLog(path: path)
        var generator = SystemRandomNumberGenerator()
        func hex(_ count: Int) -> String {
            String((0..<count).map { _ in "0123456789abcdef".randomElement(using: &generator)! })
        }
        var lineBytes = 0
        for row in 1...4000 {
            let record = ResultRecord(row: row, deviceToken: hex(64), outcome: .delivered, status: 200,
                                      apnsID: hex(36), attempts: 1, latencyMs: 1.5, endpoint: "127.0.0.1:2197")
            lineBytes += record.jsonLine.utf8.count
            try log.append(record)
        }
        try log.close()
        let fileBytes = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        // 100 random hex digits a line: 50 bytes coded, 100 raw; the rest of a line is matches.
        #expect(Double(fileBytes) / Double(lineBytes) < 0.3, "\(fileBytes) bytes of zstd for \(lineBytes) of lines")
        #expect(try readAll(path).records.count == 4000)
    }
}
