import Foundation
import Testing
import TestSupport

/// Real campaigns: the built binary's `send` against its `mock-server` on loopback, over TLS with a
/// CA and keys made for the test. Every test checks the accounting invariant.
@Suite(.serialized) struct SendCampaignTests {
    /// A campaign of `rows` generated rows (with the given invalid/unregistered rates) and a mock.
    struct Rig {
        let scratch: TemporaryDirectory
        let key: String
        let csv: String
        let unregisteredFile: String
        let totals: (rows: Int, invalid: Int, unregistered: Int)

        init(rows: Int, invalidRate: Double = 0, unregisteredRate: Double = 0, seed: Int = 1) throws {
            scratch = try TemporaryDirectory()
            key = try scratch.signingKey()
            csv = scratch.path("campaign.csv")
            unregisteredFile = scratch.path("unregistered.txt")
            let gen = try Binary.run(["gen", "--rows", "\(rows)", "--out", csv, "--invalid-rate", "\(invalidRate)",
                                      "--unregistered-rate", "\(unregisteredRate)", "--unregistered-out", unregisteredFile,
                                      "--seed", "\(seed)"])
            try #require(gen.status == 0, "gen failed: \(gen.stderr)")
            let unregistered = (try? String(contentsOfFile: unregisteredFile, encoding: .utf8))?
                .split(separator: "\n").count ?? 0
            totals = (rows, Self.invalidRows(csv), unregistered)
        }

        /// Rows gen made invalid, counted independently of our own decoder: Python's csv and json.
        static func invalidRows(_ csv: String) -> Int {
            let script = """
                import csv, json, re, sys
                bad = 0
                for row in csv.DictReader(open(sys.argv[1], newline='')):
                    t, p, pr = row['device_token'], row['payload'], row.get('priority', '')
                    ok = bool(re.fullmatch(r'([0-9a-fA-F]{2})+', t)) and len(t) <= 200
                    try:
                        ok = ok and isinstance(json.loads(p), dict) and len(p.encode()) <= 4096
                    except Exception:
                        ok = False
                    ok = ok and pr in ('', '10', '5', '1')
                    bad += 0 if ok else 1
                print(bad)
                """
            let result = try? Command.run("/usr/bin/env", ["python3", "-c", script, csv])
            return Int(result?.stdout.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? -1
        }

        func mock(_ extra: [String] = []) throws -> MockServerProcess {
            try MockServerProcess(scratch: scratch, keyFile: key,
                                  extra: ["--unregistered-file", unregisteredFile, "--max-streams", "100"] + extra)
        }

        func send(_ mock: MockServerProcess, _ extra: [String] = [], input: String? = nil) throws -> CampaignRun {
            let out = scratch.path("out-\(UUID().uuidString.prefix(8))")
            let result = try Binary.run(sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: input ?? csv,
                                                      out: out) + extra)
            return CampaignRun(result: result, outDirectory: out)
        }

        /// Starts `send` into a fresh `out`, sends it `signal` once it has begun sending and `seconds`
        /// have passed since it started, and waits for it to end.
        func sendInterrupted(_ mock: MockServerProcess, out: String, after seconds: Double, signal: Int32) throws -> Process {
            let started = Date()
            let process = try Binary.start(sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: csv, out: out),
                                           stderrFile: out + ".stderr")
            Self.waitUntilSending(process, out: out)
            // Clock: the test's, in this build's time (a sanitized binary is slower to get going);
            // never before the run has begun sending, which a loaded machine can delay past any delay.
            let left = TestTime.seconds(seconds) - Date().timeIntervalSince(started)
            if left > 0 { Thread.sleep(forTimeInterval: left) }
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
            return process
        }

        /// Waits until the run `process` writes into a fresh `out` has handed a row to a connection (a
        /// bit set in its `sent-rows`): past its start-up, its signal handlers in place. Bounded by
        /// 60 s in this build's time, or the process's end.
        static func waitUntilSending(_ process: Process, out: String) {
            let deadline = Date().addingTimeInterval(TestTime.seconds(60))
            while process.isRunning && Date() < deadline && !SendResumeTests.sentRows(out).anySent {
                Thread.sleep(forTimeInterval: 0.005)
            }
        }

        func sendArguments(endpoint: String, caFile: String, input: String, out: String) -> [String] {
            ["send", "--input", input, "--endpoint", endpoint, "--ca-file", caFile,
             "--key-file", key, "--key-id", MockServerProcess.keyID, "--team-id", MockServerProcess.teamID,
             "--topic", MockServerProcess.topic, "--connections", "2", "--max-streams", "50",
             "--retry-base-ms", "20", "--retry-max-ms", "200", "--reconnect-base-ms", "20", "--reconnect-max-ms", "200",
             "--progress", "never", "--out", out]
        }
    }

    @Test func cleanCampaignDeliversEveryValidRowAndReportsTheDeadTokens() throws {
        let rig = try Rig(rows: 3000, invalidRate: 0.02, unregisteredRate: 0.03)
        let mock = try rig.mock()
        let run = try rig.send(mock)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 3000)
        let summary = try run.summary
        #expect(summary["rejected"] as? Int == rig.totals.invalid)
        #expect(summary["unregistered"] as? Int == rig.totals.unregistered)
        #expect(summary["delivered"] as? Int == 3000 - rig.totals.invalid - rig.totals.unregistered)
        #expect(summary["exit_status"] as? Int == 0)

        // The cleanup list is exactly the mock's unregistered list, with its timestamps.
        let expected = try String(contentsOfFile: rig.unregisteredFile, encoding: .utf8).split(separator: "\n")
            .map { $0.split(separator: ",").map(String.init) }
        let dead = try run.deadTokens
        #expect(Set(dead.map { $0[0] }) == Set(expected.map { $0[0] }))
        let byToken = Dictionary(uniqueKeysWithValues: try run.records.compactMap { record -> (String, Int64)? in
            guard record["outcome"] as? String == "unregistered" else { return nil }
            return (record["device_token"] as? String ?? "", (record["unregistered_at"] as? NSNumber)?.int64Value ?? -1)
        })
        for line in expected where line.count > 1 {
            #expect(byToken[line[0]] == Int64(line[1]), "timestamp of \(line[0])")
        }
    }

    /// `send ... 2>/dev/null` (a cron line that keeps only what it mails) still prints the summary;
    /// the progress line stays on stderr.
    @Test func theSummaryGoesToStdoutSoDiscardingStderrKeepsIt() throws {
        let rig = try Rig(rows: 400, unregisteredRate: 0.05)
        let mock = try rig.mock()
        let out = rig.scratch.path("out-stdout")
        var arguments = rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: rig.csv, out: out)
        arguments[arguments.firstIndex(of: "--progress")! + 1] = "always"
        let quoted = ([Binary.url.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let discarded = try Command.run("/bin/sh", ["-c", quoted.joined(separator: " ") + " 2>/dev/null"])
        let run = CampaignRun(result: discarded, outDirectory: out)
        try run.checkEveryRowExactlyOnce(rows: 400)
        let unregistered = try run.summary["unregistered"] as? Int ?? -1
        #expect(discarded.status == 0)
        #expect(discarded.stdout.contains("400 rows: delivered \(400 - unregistered), unregistered \(unregistered)"),
                "\(discarded.stdout)")
        #expect(discarded.stdout.contains("summary:     \(out)/summary.json"), "\(discarded.stdout)")

        let both = try rig.send(mock, ["--progress", "always"])
        mock.stop()
        #expect(both.result.status == 0, "\(both.result.stderr)")
        #expect(both.result.stdout.contains("400 rows: "), "\(both.result.stdout)")
        #expect(!both.result.stderr.contains("400 rows: "), "the summary is printed once, on stdout")
        #expect(!both.result.stderr.isEmpty, "the progress line stays on stderr")
        #expect(!both.result.stdout.contains("\r"), "no progress on stdout")
    }

    @Test func goawayMidFlightResendsTheUnprocessedStreams() throws {
        let rig = try Rig(rows: 2000)
        let mock = try rig.mock(["--goaway-after", "300"])
        let run = try rig.send(mock)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 2000)
        #expect(try run.summary["delivered"] as? Int == 2000)
        // Each connection was told to go away at least once, and the run went on.
        #expect(try (mock.stats()["connections"] as? Int ?? 0) > 2)
    }

    @Test func tcpResetsAreRetriedAndMarked() throws {
        let rig = try Rig(rows: 2000)
        let mock = try rig.mock(["--reset-after", "250"])
        let run = try rig.send(mock, ["--max-attempts", "10"])
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 2000)
        #expect(try run.summary["delivered"] as? Int == 2000)
        let marked = try run.records.filter { $0["retried_after_connection_loss"] as? Bool == true }
        #expect(!marked.isEmpty, "rows in flight at a reset are marked")
    }

    @Test func tooManyRequestsStormRetriesEachTokenOnlyAfterADelay() throws {
        let rig = try Rig(rows: 1500)
        let mock = try rig.mock(["--too-many-requests", "0.3", "--seed", "7"])
        let run = try rig.send(mock, ["--max-attempts", "10", "--retry-base-ms", "40"])
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 1500)
        #expect(try run.summary["delivered"] as? Int == 1500)
        // From the mock's own record: after a 429, the same token came back no sooner than half
        // the base backoff.
        var last429: [String: Double] = [:]
        var retried = 0
        for request in try mock.records() {
            let token = request["device_token"] as? String ?? ""
            let time = (request["time_ms"] as? NSNumber)?.doubleValue ?? (request["time"] as? NSNumber)?.doubleValue ?? 0
            if let previous = last429.removeValue(forKey: token) {
                retried += 1
                #expect(time - previous >= 20, "token \(token) retried \(time - previous) ms after its 429")
            }
            if request["status"] as? Int == 429 { last429[token] = time }
        }
        #expect(retried > 100)
    }

    @Test func serverErrorBurstsAreRetriedWithBackoff() throws {
        let rig = try Rig(rows: 1500)
        let mock = try rig.mock(["--fail", "500:0.1,503:0.1", "--seed", "3"])
        let run = try rig.send(mock, ["--max-attempts", "10"])
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 1500)
        #expect(try run.summary["delivered"] as? Int == 1500)
        let retried = try run.records.filter { ($0["attempts"] as? Int ?? 0) > 1 }
        #expect(retried.count > 100)
        #expect(run.result.stdout.contains("\(retried.count) rows needed more than one request"), "the summary, on stdout")
    }

    @Test func maxAttemptsEndsInGaveUpWithExitThree() throws {
        let rig = try Rig(rows: 500)
        let mock = try rig.mock(["--fail", "503:0.5", "--seed", "11"])
        let run = try rig.send(mock, ["--max-attempts", "2"])
        mock.stop()
        #expect(run.result.status == 3, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 500)
        #expect(try (run.summary["gave_up"] as? Int ?? 0) > 50)
    }

    @Test func theRunsExpirationStopsRetriesOfRowsWithoutHeadersOfTheirOwn() throws {
        // --expiration long past: a retryable answer cannot be retried in time, so every row gives
        // up after its first request instead of retrying up to --max-attempts.
        let rig = try Rig(rows: 300)
        let mock = try rig.mock(["--fail", "503:1.0"])
        let run = try rig.send(mock, ["--max-attempts", "5", "--expiration", "1"])
        mock.stop()
        #expect(run.result.status == 3, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 300)
        #expect(try run.summary["gave_up"] as? Int == 300)
        #expect(try run.records.allSatisfy { $0["attempts"] as? Int == 1 })
    }

    @Test func latencyDoesNotLoseRows() throws {
        let rig = try Rig(rows: 1500)
        let mock = try rig.mock(["--latency-ms", "20", "--latency-jitter-ms", "10"])
        let run = try rig.send(mock)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 1500)
        let latency = try run.summary["latency_ms"] as? [String: Any]
        #expect(((latency?["p50"] as? NSNumber)?.doubleValue ?? 0) >= 15)
    }

    @Test func stalledConnectionIsDetectedAndItsStreamsResent() throws {
        let rig = try Rig(rows: 1000)
        let mock = try rig.mock(["--stall-after", "200"])
        let run = try rig.send(mock, ["--response-timeout", "1", "--ping-interval", "0.5", "--max-attempts", "10"])
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 1000)
        #expect(try run.summary["delivered"] as? Int == 1000)
    }

    @Test func anEndpointThatIsDownDoesNotStopTheOthers() throws {
        let rig = try Rig(rows: 1000)
        let mock = try rig.mock()
        let closedPort = try Self.closedLoopbackPort()
        let out = rig.scratch.path("out-down")
        var arguments = rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: rig.csv, out: out)
        arguments += ["--endpoint", "127.0.0.1:\(closedPort)", "--connections", "4"]
        let run = CampaignRun(result: try Binary.run(arguments), outDirectory: out)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 1000)
        #expect(try run.summary["delivered"] as? Int == 1000)
    }

    @Test func everyEndpointUnreachableGivesUpWithExitThree() throws {
        let rig = try Rig(rows: 200)
        let closedPort = try Self.closedLoopbackPort()
        let out = rig.scratch.path("out-unreachable")
        var arguments = rig.sendArguments(endpoint: "127.0.0.1:\(closedPort)", caFile: "", input: rig.csv, out: out)
        let caIndex = arguments.firstIndex(of: "--ca-file")!
        arguments.removeSubrange(caIndex...caIndex + 1)
        arguments += ["--unreachable-timeout", "1.5"]
        let run = CampaignRun(result: try Binary.run(arguments), outDirectory: out)
        #expect(run.result.status == 3, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 200)
        let reasons = Set(try run.records.compactMap { $0["reason"] as? String })
        #expect(reasons == ["Unreachable"])
    }

    @Test func refusedCredentialsStopTheRunAtOnce() throws {
        let rig = try Rig(rows: 1000, invalidRate: 0.02)
        let mock = try rig.mock()
        let otherKey = try rig.scratch.signingKey("other.p8")
        let out = rig.scratch.path("out-refused")
        var arguments = rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: rig.csv, out: out)
        arguments[arguments.firstIndex(of: rig.key)!] = otherKey
        let run = CampaignRun(result: try Binary.run(arguments), outDirectory: out)
        mock.stop()
        #expect(run.result.status == 2, "\(run.result.stderr)")
        #expect(run.result.stdout.contains("InvalidProviderToken"), "\(run.result.stdout)")
        try run.checkEveryRowExactlyOnce(rows: 1000)
        let summary = try run.summary
        #expect(summary["delivered"] as? Int == 0)
        #expect(summary["aborted"] as? Int == 1000 - rig.totals.invalid)
        #expect(try (mock.stats()["requests"] as? Int ?? 0) <= 5, "the list is not burnt")
    }

    @Test func aDisallowedTopicAbortsAfterTheConfiguredStreak() throws {
        let rig = try Rig(rows: 1000)
        let mock = try rig.mock()
        let out = rig.scratch.path("out-topic")
        var arguments = rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: rig.csv, out: out)
        arguments[arguments.firstIndex(of: MockServerProcess.topic)!] = "com.example.other"
        arguments += ["--abort-after", "20"]
        let run = CampaignRun(result: try Binary.run(arguments), outDirectory: out)
        mock.stop()
        #expect(run.result.status == 2, "\(run.result.stderr)")
        #expect(run.result.stdout.contains("TopicDisallowed"), "\(run.result.stdout)")
        try run.checkEveryRowExactlyOnce(rows: 1000)
        let summary = try run.summary
        // The first 19 refusals fail their rows; the 20th stops the run, and it and every row not
        // yet answered end aborted with the reason.
        #expect(summary["failed"] as? Int == 19)
        #expect(summary["aborted"] as? Int == 1000 - 19)
        #expect(try run.records.filter { $0["outcome"] as? String == "aborted" }
            .allSatisfy { $0["reason"] as? String == "TopicDisallowed" })
    }

    @Test func refusedStreamsAreResentWithoutCountingAnAttempt() throws {
        let rig = try Rig(rows: 1500)
        let mock = try rig.mock(["--refuse-streams", "0.2", "--seed", "5"])
        let run = try rig.send(mock)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 1500)
        let records = try run.records
        #expect(records.allSatisfy { $0["attempts"] as? Int == 1 })
        #expect(try (mock.stats()["requests"] as? Int ?? 0) > 1600, "some streams were refused and resent")
    }

    @Test func sigtermRecordsEveryRowAndWritesEveryFile() throws {
        let rig = try Rig(rows: 30000)
        let mock = try rig.mock(["--latency-ms", "50"])
        let out = rig.scratch.path("out-term")
        // About 2,000 rows a second (2 connections × 50 streams / 50 ms): well inside the run.
        let process = try rig.sendInterrupted(mock, out: out, after: 2.5, signal: SIGTERM)
        mock.stop()
        let stderr = (try? String(contentsOfFile: out + ".stderr", encoding: .utf8)) ?? ""
        #expect(process.terminationStatus == 2, "\(stderr.suffix(4000))")
        let run = CampaignRun(result: .init(status: process.terminationStatus, stdout: "", stderr: stderr), outDirectory: out)
        try run.checkEveryRowExactlyOnce(rows: 30000)
        let summary = try run.summary
        #expect((summary["aborted"] as? Int ?? 0) > 0)
        #expect((summary["delivered"] as? Int ?? 0) > 0)
        #expect(FileManager.default.fileExists(atPath: out + "/dead-tokens.csv"))
    }

    @Test func sigkillLeavesALogWhoseCompleteFramesDecode() throws {
        let rig = try Rig(rows: 30000)
        let mock = try rig.mock(["--latency-ms", "30"])
        let out = rig.scratch.path("out-kill")
        _ = try rig.sendInterrupted(mock, out: out, after: 2.5, signal: SIGKILL)
        mock.stop()
        let report = try Binary.run(["report", out + "/results.jsonl.zst", "--json"])
        #expect(report.status == 0, "\(report.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any]
        let total = json?["total"] as? [String: Any]
        #expect(((total?["rows"] as? Int) ?? 0) > 0, "frames flushed every second survive the kill")
        // The zstd CLI agrees on every complete frame.
        let decoded = try ZstdCLI.decode(out + "/results.jsonl.zst")
        let lines = decoded.stdout.split(separator: "\n").filter { $0.hasSuffix("}") }
        #expect(lines.count == (total?["rows"] as? Int ?? -1))
    }

    @Test func verificationFailureOnEveryEndpointStopsWithExitTwo() throws {
        let rig = try Rig(rows: 300)
        let mock = try rig.mock()
        let out = rig.scratch.path("out-tls")
        var arguments = rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: rig.csv, out: out)
        let caIndex = arguments.firstIndex(of: "--ca-file")!
        arguments.removeSubrange(caIndex...caIndex + 1)
        let run = CampaignRun(result: try Binary.run(arguments), outDirectory: out)
        mock.stop()
        #expect(run.result.status == 2, "\(run.result.stderr)")
        #expect(run.result.stdout.contains("TLS"), "\(run.result.stdout)")
        try run.checkEveryRowExactlyOnce(rows: 300)
    }

    static func closedLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
