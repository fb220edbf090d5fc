import Foundation
import Testing
import TestSupport

/// Input that streams (a named pipe, `--input -`, a piped `.csv.zst`), signals while the reader
/// waits for input, a line that cannot be read late in the file, and token auth with no topic.
@Suite(.serialized) struct SendStreamTests {
    typealias Rig = SendCampaignTests.Rig

    /// `send` started with `stdin` as its standard input, stderr to a file next to `out`.
    static func start(_ arguments: [String], out: String, stdin: Any? = nil) throws -> Process {
        try Binary.start(arguments, standardInput: stdin, stderrFile: out + ".stderr")
    }

    /// Waits for `process` to end; a run still going after `limit` seconds is killed (a regression
    /// that blocks on input must fail the test, not hang it). Returns false then.
    @discardableResult
    static func finish(_ process: Process, within limit: Double = 60) -> Bool {
        let deadline = ContinuousClock.now + .seconds(TestTime.seconds(limit))
        while process.isRunning && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
        guard process.isRunning else { return true }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return false
    }

    static func stderr(_ out: String) -> String {
        (try? String(contentsOfFile: out + ".stderr", encoding: .utf8)) ?? ""
    }

    /// Writes `data` into `handle` on another thread (a producer such as `zcat`), then closes it
    /// unless `hold` is given, in which case it stays open (an idle writer) until `hold` is signalled.
    static func produce(_ data: Data, into handle: @escaping @Sendable () -> FileHandle?, hold: DispatchSemaphore? = nil) {
        Thread.detachNewThread {
            guard let handle = handle() else { return }
            handle.write(data)
            hold?.wait()
            try? handle.close()
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    @Test func aNamedPipeIsReadWithoutTheNoPrescanFlag() throws {
        let rig = try Rig(rows: 1500, invalidRate: 0.02)
        let fifo = rig.scratch.path("campaign.pipe")
        try #require(mkfifo(fifo, 0o600) == 0)
        Self.produce(try Data(contentsOf: URL(fileURLWithPath: rig.csv))) { FileHandle(forWritingAtPath: fifo) }
        let mock = try rig.mock()
        let out = rig.scratch.path("out-fifo")
        let process = try Self.start(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: fifo, out: out), out: out)
        #expect(Self.finish(process), "read the pipe once and ended")
        mock.stop()
        #expect(process.terminationStatus == 0, "\(Self.stderr(out))")
        let run = CampaignRun(result: Binary.Result(status: process.terminationStatus, stdout: "", stderr: Self.stderr(out)),
                              outDirectory: out)
        try run.checkEveryRowExactlyOnce(rows: 1500)
        #expect(try run.summary["rejected"] as? Int == rig.totals.invalid)
        #expect(try (mock.stats()["requests"] as? Int ?? 0) >= 1500 - rig.totals.invalid)
    }

    /// `-` and `/dev/stdin` with a pipe as standard input, plain and zstd-compressed: the
    /// compressed stream is known by its magic number (nothing in a name says `.zst`).
    @Test(arguments: [("-", false), ("/dev/stdin", false), ("-", true), ("/dev/stdin", true)])
    func aCampaignPipedToStandardInputIsSentInFull(input: String, compressed: Bool) throws {
        let rig = try Rig(rows: 1200, invalidRate: 0.02)
        var source = rig.csv
        if compressed {
            source = rig.scratch.path("campaign.csv.zst")
            try #require(try Command.run("/usr/bin/zstd", ["-q", "-f", rig.csv, "-o", source]).status == 0)
        }
        let mock = try rig.mock()
        let out = rig.scratch.path("out-stdin")
        let pipe = Pipe()
        let process = try Self.start(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: input, out: out),
                                     out: out, stdin: pipe)
        let writing = pipe.fileHandleForWriting
        Self.produce(try Data(contentsOf: URL(fileURLWithPath: source))) { writing }
        #expect(Self.finish(process), "read standard input once and ended")
        mock.stop()
        #expect(process.terminationStatus == 0, "\(Self.stderr(out))")
        let run = CampaignRun(result: Binary.Result(status: process.terminationStatus, stdout: "", stderr: Self.stderr(out)),
                              outDirectory: out)
        try run.checkEveryRowExactlyOnce(rows: 1200)
        #expect(try run.summary["rejected"] as? Int == rig.totals.invalid)
        #expect(try run.summary["delivered"] as? Int == 1200 - rig.totals.invalid)
    }

    /// Waits until `process` holds `path` open (a link in /proc/PID/fd), at most 60 s in this
    /// build's time; false if it never does or ends first.
    static func waitUntilOpen(_ path: String, by process: Process) -> Bool {
        let fds = "/proc/\(process.processIdentifier)/fd"
        let deadline = Date().addingTimeInterval(TestTime.seconds(60))
        while process.isRunning && Date() < deadline {
            let open = (try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? []
            if open.contains(where: { (try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + $0)) == path }) {
                return true
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return false
    }

    @Test func aSignalWhileNoWriterHasOpenedThePipeEndsTheRunAtOnce() throws {
        let rig = try Rig(rows: 1)
        let fifo = rig.scratch.path("nobody.pipe")
        try #require(mkfifo(fifo, 0o600) == 0)
        let mock = try rig.mock()
        let out = rig.scratch.path("out-nowriter")
        let process = try Self.start(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: fifo, out: out), out: out)
        // Clock: none; the event itself. The run opens the pipe (without blocking) only after its
        // signal handlers are in place, which a loaded machine can delay past any fixed sleep.
        try #require(Self.waitUntilOpen(fifo, by: process), "the run never opened \(fifo)")
        Thread.sleep(forTimeInterval: 0.2)
        #expect(process.isRunning, "waiting for a writer")
        let signalled = ContinuousClock.now
        kill(process.processIdentifier, SIGTERM)
        Self.finish(process, within: 10)
        let waited = Self.seconds(ContinuousClock.now - signalled)
        mock.stop()
        // Clock: the test's, from the signal to the exit; the 1 s is the contract itself, scaled for sanitizers.
        #expect(waited <= TestTime.seconds(1.0), "exited \(waited) s after SIGTERM")
        #expect(process.terminationStatus == 2, "\(Self.stderr(out))")
        #expect(Self.stderr(out).contains("interrupted while waiting for \(fifo)"), "\(Self.stderr(out))")
        #expect(Self.stderr(out).contains("nothing was sent"))
        #expect(!Self.stderr(out).contains("Stack dump"))
        #expect(try (mock.stats()["requests"] as? Int ?? -1) == 0)
    }

    /// The writer sends 300 rows and then goes quiet without closing: the run has sent them and
    /// waits in the reader; the signal ends it within a second with those 300 rows recorded.
    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalWithAnIdleWriterEndsTheRunWithEveryRowReadRecorded(signal: Int32) throws {
        let rig = try Rig(rows: 300)
        let fifo = rig.scratch.path("idle.pipe")
        try #require(mkfifo(fifo, 0o600) == 0)
        let hold = DispatchSemaphore(value: 0)
        defer { hold.signal() }
        Self.produce(try Data(contentsOf: URL(fileURLWithPath: rig.csv)), into: { FileHandle(forWritingAtPath: fifo) }, hold: hold)
        let mock = try rig.mock()
        let out = rig.scratch.path("out-idle")
        let process = try Self.start(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: fifo, out: out), out: out)
        let deadline = ContinuousClock.now + .seconds(20)
        // The result log is flushed at least every second: once it holds 300 records, all were answered.
        while ContinuousClock.now < deadline {
            if let lines = try? ZstdCLI.jsonLines(out + "/results.jsonl.zst"), lines.count >= 300 { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(process.isRunning, "waiting for more input")
        let signalled = ContinuousClock.now
        kill(process.processIdentifier, signal)
        Self.finish(process, within: 10)
        let waited = Self.seconds(ContinuousClock.now - signalled)
        mock.stop()
        // Clock: the test's, from the signal to the exit; the 1 s is the contract itself, scaled for sanitizers.
        #expect(waited <= TestTime.seconds(1.0), "exited \(waited) s after the signal")
        #expect(process.terminationStatus == 2, "\(Self.stderr(out))")
        let run = CampaignRun(result: Binary.Result(status: 2, stdout: "", stderr: Self.stderr(out)), outDirectory: out)
        try run.checkEveryRowExactlyOnce(rows: 300)
        #expect(try run.summary["delivered"] as? Int == 300, "\(Self.stderr(out))")
        #expect(try run.summary["exit_status"] as? Int == 2)
    }

    /// 20,000 rows under `--no-prescan`, line 15,001 (data row 15,000) unreadable.
    @Test(arguments: [#"zz"x,{}"#, "ab\u{0}cd,{}"])
    func rowsBeforeAnUnreadableLineAreSentAndTheSummarySaysWhereReadingStopped(badLine: String) throws {
        let rig = try Rig(rows: 20_000)
        var lines = try String(contentsOfFile: rig.csv, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        lines[15_000] = Substring(badLine)
        let input = try rig.scratch.write("bad-late.csv", lines.joined(separator: "\n"))
        let mock = try rig.mock()
        let run = try rig.send(mock, ["--no-prescan"], input: input)
        mock.stop()
        #expect(run.result.status == 2, "\(run.result.stderr)")
        #expect(run.result.stdout.contains("line 15001"), "\(run.result.stdout)")
        #expect(!run.result.stderr.contains("Stack dump"))
        try run.checkEveryRowExactlyOnce(rows: 15_000)
        let summary = try run.summary
        #expect(summary["input_stopped_at_line"] as? Int == 15_001)
        #expect(summary["delivered"] as? Int == 14_999)
        #expect(summary["aborted"] as? Int == 1)
        #expect((summary["by_reason"] as? [String: Int])?["InputError"] == 1)
        let aborted = try run.records.filter { $0["outcome"] as? String == "aborted" }
        #expect(aborted.map { $0["row"] as? Int } == [15_000])
        // The mock's own record: each of the 14,999 rows before the bad line was delivered once.
        let expected = Set(lines[1...14_999].map { String($0.prefix(while: { $0 != "," })).lowercased() })
        let delivered = try mock.records().filter { $0["status"] as? Int == 200 }.compactMap { $0["device_token"] as? String }
        #expect(delivered.count == 14_999)
        #expect(Set(delivered) == expected)
    }

    /// The rig's send arguments without `--topic`.
    static func withoutTopic(_ arguments: [String]) -> [String] {
        guard let index = arguments.firstIndex(of: "--topic") else { return arguments }
        var result = arguments
        result.removeSubrange(index...(index + 1))
        return result
    }

    @Test func tokenAuthWithNoTopicAnywhereStopsBeforeSending() throws {
        let rig = try Rig(rows: 50)
        let mock = try rig.mock()
        let token = String(repeating: "ab", count: 32)
        let emptyTopic = try rig.scratch.write("empty-topic.csv", """
            device_token,topic,payload
            \(token),\(MockServerProcess.topic),{}
            \(token),,{}

            """)
        let cases: [(input: String, extra: [String], message: String)] = [
            (rig.csv, [], "no --topic and no topic column"),
            (rig.csv, ["--no-prescan"], "no --topic and no topic column"),
            (emptyTopic, [], "data row 2 has an empty topic"),
        ]
        for (input, extra, message) in cases {
            let out = rig.scratch.path("out-\(UUID().uuidString.prefix(8))")
            let result = try Binary.run(Self.withoutTopic(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile,
                                                                             input: input, out: out)) + extra)
            #expect(result.status == 1, "\(input) \(extra): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
            #expect(result.stderr.contains("--topic") && result.stderr.contains("topic column"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out + "/results.jsonl.zst"), "nothing was started")
        }
        mock.stop()
        #expect(try (mock.stats()["requests"] as? Int ?? -1) == 0, "nothing was sent")
    }

    /// Streamed input has no prescan: a row whose topic column is empty is rejected, MissingTopic.
    @Test func withoutThePrescanARowWithAnEmptyTopicIsRejected() throws {
        let rig = try Rig(rows: 1)
        let mock = try rig.mock()
        let rows = (1...20).map { index in
            String(format: "%064x", index) + "," + (index == 7 ? "" : MockServerProcess.topic) + ",{}"
        }
        let input = try rig.scratch.write("topics.csv", "device_token,topic,payload\n" + rows.joined(separator: "\n") + "\n")
        let out = rig.scratch.path("out-topics")
        let result = try Binary.run(Self.withoutTopic(rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile,
                                                                         input: input, out: out)) + ["--no-prescan"])
        mock.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let run = CampaignRun(result: result, outDirectory: out)
        try run.checkEveryRowExactlyOnce(rows: 20)
        let rejected = try run.records.filter { $0["outcome"] as? String == "rejected" }
        #expect(rejected.map { $0["row"] as? Int } == [7])
        #expect(rejected.first?["reason"] as? String == "MissingTopic")
        #expect(try run.summary["delivered"] as? Int == 19)
    }
}
