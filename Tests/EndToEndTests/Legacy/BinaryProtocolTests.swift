import Foundation
import Testing
import TestSupport

/// `send --protocol binary` against the mock's binary gateway over real TLS with a client
/// certificate made at test time: every row once with the right outcome, and the mock's own
/// record showing that what the gateway discarded was sent again, and nothing else.
@Suite(.serialized) struct BinaryProtocolTests {
    static func send(_ rig: SendCampaignTests.Rig, _ mock: LegacyMockProcess, out: String, extra: [String] = []) throws -> CampaignRun {
        let arguments = ["send", "--protocol", "binary", "--input", rig.csv, "--endpoint", mock.binaryEndpoint,
                         "--connections", "2", "--progress", "never", "--out", out] + mock.certificateArguments + extra
        return CampaignRun(result: try Binary.run(arguments), outDirectory: out)
    }

    /// Accepted frames per device token in the gateway's record.
    static func acceptedCounts(_ record: [[String: Any]]) -> [String: Int] {
        var counts: [String: Int] = [:]
        for entry in record where entry["result"] as? String == "accepted" {
            counts[entry["device_token"] as? String ?? "", default: 0] += 1
        }
        return counts
    }

    @Test func badTokensFailAndExactlyTheNotificationsAfterEachRefusalAreSentAgain() throws {
        let rig = try SendCampaignTests.Rig(rows: 1500, unregisteredRate: 0.02, seed: 5)
        let mock = try LegacyMockProcess(scratch: rig.scratch, unregisteredFile: rig.unregisteredFile,
                                         extra: ["--binary-shutdown-after", "600", "--binary-fail", "1:0.005,255:0.005", "--seed", "9"])
        let out = rig.scratch.path("out")
        let run = try Self.send(rig, mock, out: out)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 1500)
        let records = try run.records
        let bad = records.filter { $0["outcome"] as? String == "bad_token" }
        #expect(bad.count == rig.totals.unregistered && bad.count > 0)
        #expect(bad.allSatisfy { $0["status"] as? Int == 8 && $0["reason"] as? String == "InvalidToken" })
        #expect(records.filter { $0["outcome"] as? String == "delivered" }.count == 1500 - bad.count)
        #expect(try run.deadTokens.count == bad.count)

        let record = try mock.record()
        // The gateway refused each bad token once, shut one connection down mid-run and failed a few
        // frames; every frame it discarded after a refusal was sent again and accepted once, and no
        // frame it had accepted was sent again.
        #expect(record.contains { $0["result"] as? String == "discarded" })
        #expect(record.contains { $0["status"] as? Int == 1 || $0["status"] as? Int == 255 })
        let accepted = Self.acceptedCounts(record)
        let badTokens = Set(bad.compactMap { $0["device_token"] as? String })
        let delivered = records.filter { $0["outcome"] as? String == "delivered" }.compactMap { $0["device_token"] as? String }
        #expect(delivered.allSatisfy { accepted[$0.lowercased()] == 1 }, "each delivered row accepted exactly once")
        #expect(badTokens.allSatisfy { accepted[$0.lowercased()] == nil })
        let refused = record.filter { $0["result"] as? String == "refused" && $0["status"] as? Int == 8 }
        #expect(refused.count == badTokens.count)
    }

    @Test func deadTokensDoNotMultiplyTheFramesSent() throws {
        // Each refusal makes the gateway discard what followed it on that connection: with the whole
        // window (10,000) in flight around every dead token, 5,000 rows once cost 243,486 frames.
        let rig = try SendCampaignTests.Rig(rows: 5000, unregisteredRate: 0.025, seed: 29)
        let mock = try LegacyMockProcess(scratch: rig.scratch, unregisteredFile: rig.unregisteredFile)
        let out = rig.scratch.path("out")
        let run = try Self.send(rig, mock, out: out)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 5000)
        let records = try run.records
        let bad = records.filter { $0["outcome"] as? String == "bad_token" }.count
        #expect(bad == rig.totals.unregistered && (100...150).contains(bad))
        #expect(records.filter { $0["outcome"] as? String == "delivered" }.count == 5000 - bad)
        let record = try mock.record()
        let discarded = record.filter { $0["result"] as? String == "discarded" }.count
        // Clock: the mock's, as it answers a loaded machine. How much is on the wire when a refusal
        // comes back depends on how soon the scheduler lets the mock answer (18,488 frames were seen
        // at load 7, 16,591 at 18, against ~10,000 idle), so the window's own cost is judged on a
        // virtual clock (`BinaryWindowCampaignTests`, ≤ 3 × rows) and this end-to-end check only
        // keeps the multiplication out: 10 × rows, where a full --binary-window per dead token once
        // cost 243,486.
        #expect(record.count <= 10 * 5000, "\(record.count) frames (\(discarded) discarded) for 5000 rows and \(bad) dead tokens")
        #expect(Self.acceptedCounts(record).values.allSatisfy { $0 == 1 }, "no row accepted twice")
    }

    @Test func aBinarySummarySaysThereIsNoLatencyRatherThanZero() throws {
        let rig = try SendCampaignTests.Rig(rows: 20, seed: 8)
        let mock = try LegacyMockProcess(scratch: rig.scratch)
        let out = rig.scratch.path("out")
        let run = try Self.send(rig, mock, out: out, extra: ["--binary-quiet-ms", "50"])
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 20)
        #expect(run.result.stdout.contains("latency n/a (the binary protocol answers only errors)"), "\(run.result.stdout)")
        #expect(!run.result.stdout.contains("latency p50"))
        // summary.json keeps its keys; a value that does not apply is null.
        let latency = try #require(try run.summary["latency_ms"] as? [String: Any])
        #expect(Set(latency.keys) == ["p50", "p90", "p99", "max"] && latency.values.allSatisfy { $0 is NSNull })
    }

    @Test func silentCloseSendsTheRowsOfItsLastQuietPeriodAgainAndSaysSo() throws {
        let rig = try SendCampaignTests.Rig(rows: 800, seed: 6)
        let mock = try LegacyMockProcess(scratch: rig.scratch, extra: ["--binary-close-after", "300"])
        let out = rig.scratch.path("out")
        let run = try Self.send(rig, mock, out: out, extra: ["--connections", "1", "--binary-quiet-ms", "1500"])
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 800)
        let records = try run.records
        #expect(records.allSatisfy { $0["outcome"] as? String == "delivered" })
        let resent = Set(records.filter { $0["retried_after_connection_loss"] as? Bool == true }
            .compactMap { ($0["device_token"] as? String)?.lowercased() })
        #expect(!resent.isEmpty)
        let accepted = Self.acceptedCounts(try mock.record())
        // Nothing lost: every row reached the gateway; the only rows it took twice are those the
        // silent close left in doubt, and their records say so.
        #expect(records.allSatisfy { (accepted[($0["device_token"] as? String ?? "").lowercased()] ?? 0) >= 1 })
        #expect(accepted.filter { $0.value > 1 }.keys.allSatisfy { resent.contains($0) })
        #expect(accepted.values.contains { $0 > 1 }, "the silent close took rows that were sent again")
    }

    @Test func tokensAndPayloadsTheBinaryAPICannotCarryAreRejectedAndNeverSent() throws {
        let scratch = try TemporaryDirectory()
        let good = String(repeating: "1a", count: 32), short = String(repeating: "2b", count: 31)
        let long = String(repeating: "3c", count: 32)
        let bigPayload = "{\"\"aps\"\":{\"\"alert\"\":\"\"" + String(repeating: "x", count: 2100) + "\"\"}}"
        let csv = try scratch.write("c.csv", "device_token,payload\n\(good),\"{\"\"aps\"\":{}}\"\n\(short),\"{\"\"aps\"\":{}}\"\n\(long),\"\(bigPayload)\"\n")
        let mock = try LegacyMockProcess(scratch: scratch)
        let out = scratch.path("out")
        let run = CampaignRun(result: try Binary.run(["send", "--protocol", "binary", "--input", csv, "--endpoint", mock.binaryEndpoint,
                                                     "--progress", "never", "--out", out, "--binary-quiet-ms", "50"]
                                                    + mock.certificateArguments), outDirectory: out)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 3)
        let outcomes = try run.records.sorted { ($0["row"] as? Int ?? 0) < ($1["row"] as? Int ?? 0) }
            .map { "\($0["outcome"] ?? "")/\($0["reason"] as? String ?? "")" }
        #expect(outcomes == ["delivered/", "rejected/BadDeviceToken", "rejected/PayloadTooLarge"])
        #expect(try mock.record().compactMap { $0["device_token"] as? String } == [good])
    }

    @Test func aGatewayThatRefusesTheClientCertificateStopsTheRunWithExitTwo() throws {
        let rig = try SendCampaignTests.Rig(rows: 40)
        let mock = try LegacyMockProcess(scratch: rig.scratch)
        // A certificate from a CA the gateway does not know (another name: OpenSSL finds a CA by
        // its name, and a namesake's wrong signature ends in another alert).
        let stranger = (certificate: rig.scratch.path("stranger.crt"), key: rig.scratch.path("stranger.key"))
        let strangerCA = (certificate: rig.scratch.path("stranger-ca.crt"), key: rig.scratch.path("stranger-ca.key"))
        for step in [["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", strangerCA.key,
                      "-out", strangerCA.certificate, "-days", "1", "-subj", "/CN=Stranger CA"],
                     ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", stranger.key,
                      "-out", rig.scratch.path("stranger.csr"), "-subj", "/CN=Apple Push Services: com.example.app"],
                     ["x509", "-req", "-in", rig.scratch.path("stranger.csr"), "-CA", strangerCA.certificate, "-CAkey",
                      strangerCA.key, "-CAcreateserial", "-out", stranger.certificate, "-days", "1"]] {
            let made = try Command.run("/usr/bin/openssl", step)
            try #require(made.status == 0, "openssl \(step[0]): \(made.stderr)")
        }
        let out = rig.scratch.path("out")
        let run = CampaignRun(result: try Binary.run(["send", "--protocol", "binary", "--input", rig.csv, "--endpoint", mock.binaryEndpoint,
                                                     "--ca-file", mock.caFile, "--cert-file", stranger.certificate,
                                                     "--cert-key-file", stranger.key, "--progress", "never", "--out", out]),
                              outDirectory: out)
        mock.stop()
        #expect(run.result.status == 2, "\(run.result.stderr)")
        #expect(run.result.stdout.contains("refused the client certificate"))
        try run.checkEveryRowExactlyOnce(rows: 40)
        #expect(try run.records.allSatisfy { $0["outcome"] as? String == "aborted" })
        #expect(try mock.record().isEmpty)
    }

    @Test func tokenAuthWithTheBinaryProtocolStopsBeforeAnythingIsSent() throws {
        let rig = try SendCampaignTests.Rig(rows: 10)
        let out = rig.scratch.path("out")
        let run = try Binary.run(["send", "--protocol", "binary", "--input", rig.csv, "--endpoint", "127.0.0.1:9",
                                  "--key-file", rig.key, "--key-id", "KEYID12345", "--team-id", "TEAM123456",
                                  "--topic", "com.example.app", "--out", out])
        #expect(run.status == 1)
        #expect(run.stderr.contains("--protocol binary") && run.stderr.contains("client certificate"))
        #expect(!FileManager.default.fileExists(atPath: out + "/results.jsonl.zst"))
    }
}
