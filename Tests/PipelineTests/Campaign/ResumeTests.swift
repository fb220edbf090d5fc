import Foundation
import Testing
import TestSupport
@testable import Pipeline

/// The pieces of `send --resume`: the input's fingerprint, the set of rows already recorded, and
/// a result log continued after a crash cut its last frame.
@Suite struct ResumeTests {
    // MARK: fingerprint

    @Test func aCopyHasTheSameFingerprintAndAnEditOfTheSameSizeDoesNot() throws {
        let directory = try TemporaryDirectory()
        // Over the 4 MiB limit, so the sampled path is the one under test.
        var bytes = (0..<(6 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) }
        let original = try directory.write("a.csv", bytes: bytes)
        let copy = try directory.write("copy.csv", bytes: bytes)
        let fingerprint = try InputFingerprint.of(path: original)
        #expect(fingerprint.size == Int64(bytes.count))
        #expect(try InputFingerprint.of(path: copy) == fingerprint)
        for offset in [10, bytes.count - 10, (1 << 20) + (bytes.count - (2 << 20)) / 2] {
            var edited = bytes
            edited[offset] ^= 0xFF
            let path = try directory.write("edited-\(offset).csv", bytes: edited)
            #expect(try InputFingerprint.of(path: path) != fingerprint, "a byte changed at \(offset)")
        }
        bytes.append(0x0A)
        #expect(try InputFingerprint.of(path: directory.write("longer.csv", bytes: bytes)) != fingerprint)
    }

    @Test func aSmallFileIsHashedWhole() throws {
        let directory = try TemporaryDirectory()
        let text = (1...2000).map { "tok\($0),{}\n" }.joined()
        let first = try InputFingerprint.of(path: directory.write("a.csv", text))
        let second = try InputFingerprint.of(path: directory.write("b.csv", text.replacingOccurrences(of: "tok1000,", with: "tok1001,")))
        #expect(first.size == second.size)
        #expect(first != second)
    }

    /// Files between the 1 MiB read buffer and the 4 MiB whole-file limit are hashed whole too:
    /// the fingerprint is the SHA-256 of the file, as `openssl dgst` computes it.
    @Test func aThreeMebibyteFileIsHashedWholeInBufferSizedReads() throws {
        let directory = try TemporaryDirectory()
        let bytes = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        let path = try directory.write("three.csv.zst", bytes: bytes)
        let fingerprint = try InputFingerprint.of(path: path)
        let text = try OpenSSL.run(["dgst", "-sha256", "-r", path])
        #expect(fingerprint.size == Int64(bytes.count))
        #expect(fingerprint.sampleSHA256 == text.split(separator: " ").first.map(String.init))
    }

    @Test func aFifoOrStdinHasNoFingerprintAndDoesNotBlock() throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.path("pipe")
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: CampaignDirectoryError.inputNotRegular(path: fifo)) { try InputFingerprint.of(path: fifo) }
        #expect(throws: CampaignDirectoryError.inputNotRegular(path: "-")) { try InputFingerprint.of(path: "-") }
    }

    // MARK: rows already recorded

    @Test func doneRowsHoldsEachRowOnceAndCountsTheMissing() {
        var done = DoneRows()
        #expect(!done.contains(1))
        let first = done.insert(5), again = done.insert(5), zero = done.insert(0), negative = done.insert(-3)
        #expect(first)
        #expect(!again, "a row is marked once")
        #expect(!zero && !negative, "not row numbers")
        for row in stride(from: 1, through: 1_000_000, by: 2) { done.insert(row) }
        #expect(done.count == 500_000)
        #expect(done.highest == 999_999)
        #expect(done.contains(63) && done.contains(64 + 1) && !done.contains(64) && !done.contains(2_000_000))
        #expect(done.missing(through: 1_000_000) == 500_000)
        #expect(done.missing(through: 10) == 5)
        #expect(done.missing(through: 0) == 0)
    }

    @Test func sentRowsAreMarkedFromSeveralThreadsAndReadBackByTheRunThatWroteThem() throws {
        let directory = try TemporaryDirectory()
        #expect(RowBitmapFile.read(path: directory.path(SentRows.fileName)) == nil)
        let sent = try SentRows(directory: directory.url.path, run: 3, rows: 1000)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for row in stride(from: 1 + thread, through: 1000, by: 4) { sent.mark(row) }
        }
        // Past the prescan's count, the reader grows the file before the rows are handed on.
        #expect(sent.cover(70_000_000))
        sent.mark(70_000_000)
        // Read as a resume reads it, while the run still holds it (as after a kill -9).
        let file = try #require(RowBitmapFile.read(path: directory.path(SentRows.fileName)))
        #expect(file.run == 3)
        #expect(file.rows.count == 1001 && file.rows.contains(1) && file.rows.contains(1000) && file.rows.contains(70_000_000))
        #expect(!file.rows.contains(1001) && !file.rows.contains(0))
        _ = try SentRows(directory: directory.url.path, run: 4, rows: nil)
        let next = try #require(RowBitmapFile.read(path: directory.path(SentRows.fileName)))
        #expect(next.run == 4 && next.rows.count == 0, "a new run starts from nothing sent")
    }

    @Test func aCrashLostTheRowsItsRunSentThatHaveNoRecord() throws {
        let directory = try TemporaryDirectory()
        let logPath = directory.path("results.jsonl.zst")
        let log = try ResultLog(path: logPath)
        for record in ResultLogTests.sampleRecords(100) where record.row != 50 { try log.append(record) }
        for row in 101...110 { try log.append(ResultRecord(row: row, deviceToken: "tok\(row)", outcome: .aborted, reason: "Interrupted")) }
        try log.close()
        let resumed = try ResumedLog.load(logPath: logPath, deadTokensPath: directory.path("dead-tokens.csv"))
        let sent = try SentRows(directory: directory.url.path, run: 2, rows: 200)
        for row in 1...120 { sent.mark(row) }
        let lost = CrashLoss.rows(directory: directory.url.path, run: 2, log: resumed, withheld: DoneRows())
        var rows: [Int] = []
        lost.forEach { rows.append($0) }
        // Row 50 and rows 111...120; the aborted rows were recorded by the run that stopped.
        #expect(rows == [50] + Array(111...120))
        #expect(CrashLoss.rows(directory: directory.url.path, run: 3, log: resumed, withheld: DoneRows()).count == 0,
                "another run's bits were counted by the resume after it")
        var withheld = DoneRows()
        withheld.insert(50)
        #expect(CrashLoss.rows(directory: directory.url.path, run: 2, log: resumed, withheld: withheld).count == 10)
        try CrashLoss.writeWithheld(lost, directory: directory.url.path)
        #expect(CrashLoss.withheld(directory: directory.url.path).count == 11)
    }

    // MARK: continuing the log

    @Test func abortedRowsAreLeftOutOfTheResumedLogSoTheyAreSentAgain() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("results.jsonl.zst")
        let log = try ResultLog(path: path, maxFrameBytes: 2048)
        let records = ResultLogTests.sampleRecords(200).map { record -> ResultRecord in
            guard record.row > 150 else { return record }
            return ResultRecord(row: record.row, deviceToken: "tok\(record.row)", outcome: .aborted, reason: "Interrupted")
        }
        for record in records { try log.append(record) }
        try log.close()
        let resumed = try ResumedLog.load(logPath: path, deadTokensPath: directory.path("dead-tokens.csv"))
        #expect(resumed.done.count == 150 && !resumed.done.contains(151))
        #expect(resumed.summary.counts[.aborted] == 0)
        #expect(resumed.keptBytes == (try directory.read("results.jsonl.zst").count))
        let reader = try ResultLogReader(path: path)
        var back: [ResultRecord] = []
        while let record = try reader.next() { back.append(record) }
        #expect(back == Array(records.prefix(150)), "the log keeps every finished row and no aborted one")
        #expect(resumed.aborted.count == 50, "sent again, but not as rows a crash lost")
    }

    @Test func aResumedLogCutsTheCutFrameOffAndAppendsValidFrames() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("results.jsonl.zst")
        let log = try ResultLog(path: path)
        let complete = ResultLogTests.sampleRecords(300)
        for record in complete { try log.append(record) }
        try log.flush()
        let sizeAfterComplete = try directory.read("results.jsonl.zst").count
        for record in ResultLogTests.sampleRecords(300, start: 301) { try log.append(record) }
        try log.close()
        // A crash in the middle of the second frame's write.
        let whole = try directory.read("results.jsonl.zst")
        try directory.write("results.jsonl.zst", bytes: Array(whole.prefix(sizeAfterComplete + (whole.count - sizeAfterComplete) / 2)))

        let deadTokensPath = directory.path("dead-tokens.csv")
        let resumed = try ResumedLog.load(logPath: path, deadTokensPath: deadTokensPath)
        #expect(resumed.done.count == 300 && resumed.done.highest == 300)
        #expect(resumed.keptBytes == sizeAfterComplete)
        #expect(resumed.cutFrame?.frame == 2)
        #expect(resumed.summary.counts.total == 300)

        let rest = ResultLogTests.sampleRecords(300, start: 301)
        let continued = try ResultLog(path: path, appendingAfter: resumed.keptBytes)
        for record in rest { try continued.append(record) }
        try continued.close()
        for record in rest { try resumed.deadTokens.add(record) }
        try resumed.deadTokens.close()

        let reader = try ResultLogReader(path: path)
        var back: [ResultRecord] = []
        while let record = try reader.next() { back.append(record) }
        #expect(back == complete + rest, "every row once, the old ones first")
        #expect(reader.cutFrame == nil)
        let decoded = try Command.tool("zstd", ["-dc", path])
        #expect(decoded.status == 0, "the zstd tool reads the whole file: \(decoded.stderr)")
        #expect(decoded.stdout == (complete + rest).map(\.jsonLine).joined())
        let deadLines = try String(contentsOfFile: deadTokensPath, encoding: .utf8).split(separator: "\n").dropFirst()
        let deadRows = deadLines.compactMap { $0.split(separator: ",").last.flatMap { Int($0) } }
        #expect(deadRows == (complete + rest).filter(\.outcome.isDeadToken).map(\.row))
    }
}
