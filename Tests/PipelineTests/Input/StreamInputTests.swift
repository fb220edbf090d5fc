import Foundation
import Synchronization
import Testing
import TestSupport
@testable import Pipeline

/// Streams (named pipes, stdin) and inputs that go bad part-way: what the reader side hands out.
@Suite struct StreamInputTests {
    static func campaign(rows: Int) -> String {
        var text = "device_token,payload\n"
        for index in 1...rows { text += String(format: "%064x", index) + ",\"{\"\"n\"\":\(index)}\"\n" }
        return text
    }

    /// A named pipe in `directory`, and a thread that writes `bytes` into it after `delay` seconds,
    /// then keeps it open `hold` seconds more (an idle writer) before closing.
    final class PipeWriter: Sendable {
        let path: String
        private let done = Mutex(false)

        init(in directory: TemporaryDirectory, name: String = "input.pipe", bytes: [UInt8]?, delay: Double = 0,
             hold: Double = 0) throws {
            path = directory.path(name)
            try #require(mkfifo(path, 0o600) == 0)
            guard let bytes else { return }
            let path = path
            Thread.detachNewThread { [self] in
                Thread.sleep(forTimeInterval: delay)
                let fd = open(path, O_WRONLY)
                guard fd >= 0 else { return }
                var offset = 0
                while offset < bytes.count {
                    let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                    if written <= 0 { break }
                    offset += written
                }
                Thread.sleep(forTimeInterval: hold)
                close(fd)
                done.withLock { $0 = true }
            }
        }

        var finished: Bool { done.withLock { $0 } }
    }

    static func readAll(_ source: CSVSource) throws -> [CSVRow] {
        var rows: [CSVRow] = []
        while let row = try source.next() { rows.append(row) }
        return rows
    }

    @Test func aNamedPipeIsAStreamAndARegularFileIsNot() throws {
        let directory = try TemporaryDirectory()
        let pipe = try PipeWriter(in: directory, bytes: nil)
        #expect(CSVSource.isStream(path: pipe.path))
        #expect(CSVSource.isStream(path: "-"))
        #expect(CSVSource.isStream(path: "/dev/null"))
        #expect(!CSVSource.isStream(path: try directory.write("c.csv", Self.campaign(rows: 1))))
    }

    @Test func aNamedPipeIsReadOnceInFullWithoutTheWriterBeingThereAtOpen() throws {
        let directory = try TemporaryDirectory()
        let text = Self.campaign(rows: 3000)
        let pipe = try PipeWriter(in: directory, bytes: Array(text.utf8), delay: 0.2)
        let source = try CSVSource(path: pipe.path, chunkSize: 8192)
        let rows = try Self.readAll(source)
        #expect(rows.map(\.number) == Array(1...3000))
        #expect(rows[2999].string(.deviceToken) == String(format: "%064x", 3000))
    }

    @Test func compressedDataThroughAPipeIsRecognisedByItsMagicNumberNotItsName() throws {
        let directory = try TemporaryDirectory()
        try ZstdCLI.compress(try directory.write("c.csv", Self.campaign(rows: 2000)))
        let compressed = try directory.read("c.csv.zst")
        let pipe = try PipeWriter(in: directory, name: "no-extension", bytes: compressed)
        let rows = try Self.readAll(try CSVSource(path: pipe.path, chunkSize: 4096))
        #expect(rows.map(\.number) == Array(1...2000))
        #expect(rows[0].string(.payload) == #"{"n":1}"#)
    }

    @Test func aStopRequestEndsTheWaitForAWriterThatNeverComes() throws {
        let directory = try TemporaryDirectory()
        let pipe = try PipeWriter(in: directory, bytes: nil)
        let stop = Atomic(false)
        let started = ContinuousClock.now
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.3)
            stop.store(true, ordering: .releasing)
        }
        #expect(throws: InputFileError.interrupted(path: pipe.path)) {
            _ = try CSVSource(path: pipe.path, shouldStop: { stop.load(ordering: .acquiring) })
        }
        // Clock: the test's; slack: 1.2 s past the 0.3 s stop (the reader polls its stop flag), scaled for sanitizers.
        #expect(ContinuousClock.now - started < .seconds(TestTime.seconds(1.5)))
    }

    @Test func aStopRequestWithAnIdleWriterHandsOutTheRowsReadThenEnds() throws {
        let directory = try TemporaryDirectory()
        let pipe = try PipeWriter(in: directory, bytes: Array(Self.campaign(rows: 40).utf8), hold: 5)
        let stop = Atomic(false)
        let source = try CSVSource(path: pipe.path, shouldStop: { stop.load(ordering: .acquiring) })
        let batch = try #require(try source.nextBatch())
        #expect(batch.count == 40)
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.3)
            stop.store(true, ordering: .releasing)
        }
        let started = ContinuousClock.now
        #expect(throws: InputFileError.interrupted(path: pipe.path)) { _ = try source.nextBatch() }
        // Clock: the test's; slack: 1.2 s past the 0.3 s stop (the reader polls its stop flag), scaled for sanitizers.
        #expect(ContinuousClock.now - started < .seconds(TestTime.seconds(1.5)))
        #expect(source.stoppedAt == nil, "a stop request is not a bad line")
        #expect(!pipe.finished, "the writer was still idle")
    }

    /// 3,000 rows; data row 2,500 (line 2,501) is bad; chunks of 16 KiB, so the bad line sits in
    /// the middle of a chunk whose earlier rows are complete.
    static let badLines: [(name: String, line: String, error: @Sendable (String) -> InputFileError)] = [
        ("malformed quote", #"zz"x,{}"#, { .malformedQuoting(path: $0, line: 2501) }),
        ("NUL byte", "ab\0cd,{}", { .binary(path: $0, line: 2501) }),
    ]

    @Test(arguments: 0..<badLines.count)
    func everyRowBeforeABadLineIsHandedOutThenTheLineIsNamed(index: Int) throws {
        let (_, bad, expected) = Self.badLines[index]
        let directory = try TemporaryDirectory()
        var lines = Self.campaign(rows: 3000).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines[2500] = bad
        let path = try directory.write("c.csv", lines.joined(separator: "\n"))
        let source = try CSVSource(path: path, chunkSize: 16 * 1024)
        var numbers: [Int] = []
        let error = #expect(throws: InputFileError.self) {
            while let row = try source.next() { numbers.append(row.number) }
        }
        #expect(error == expected(path))
        #expect(numbers == Array(1...2499), "every complete row before the bad line")
        #expect(source.stoppedAt == InputStop(error: expected(path), fallback: 0))
        #expect(source.stoppedAt?.line == 2501)
        #expect(source.stoppedAt?.record(row: 2500).outcome == .aborted)
        #expect(source.stoppedAt?.record(row: 2500).reason == "InputError")
    }
}

/// Token auth with no `--topic`: every row must bring a topic, checked before anything is sent.
@Suite struct TopicRequirementTests {
    @Test func aHeaderWithoutATopicColumnIsRefusedByThePrescanAndTheReader() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv", "device_token,payload\nab,{}\n")
        #expect(throws: InputFileError.noTopicColumn(path: path)) { try Prescan.run(path: path, requiresTopic: true) }
        #expect(throws: InputFileError.noTopicColumn(path: path)) { _ = try CSVSource(path: path, requiresTopic: true) }
        #expect(try Prescan.run(path: path).rows == 1, "not required: the usual prescan")
        #expect(InputFileError.noTopicColumn(path: path).description.contains("--topic"))
        #expect(InputFileError.noTopicColumn(path: path).description.contains("topic column"))
    }

    @Test func theFirstRowWithAnEmptyTopicIsNamed() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv", """
            device_token,topic,payload
            ab,com.a,{}
            cd,"com.b",{}
            ef,,{}
            01,com.c,{}
            23

            """)
        #expect(throws: InputFileError.emptyTopic(path: path, row: 3)) { try Prescan.run(path: path, requiresTopic: true) }
        let full = try directory.write("full.csv", "device_token,topic,payload\nab,com.a,{}\ncd,com.b,{}\n")
        #expect(try Prescan.run(path: full, requiresTopic: true).rows == 2)
        let short = try directory.write("short.csv", "device_token,payload,topic\nab,{},com.a\ncd,{}\n")
        #expect(throws: InputFileError.emptyTopic(path: short, row: 2)) { try Prescan.run(path: short, requiresTopic: true) }
    }
}
