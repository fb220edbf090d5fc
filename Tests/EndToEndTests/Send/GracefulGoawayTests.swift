import Foundation
import Testing
import TestSupport

/// A server that rotates connections with GOAWAY (as APNs does) neither slows a campaign down nor
/// gets any notification twice: the built binary against its own mock over TLS on loopback.
@Suite(.serialized) struct GracefulGoawayTests {
    typealias Rig = SendCampaignTests.Rig

    /// `send` with the given reconnect backoff (instead of the rig's 20–200 ms) plus `extra`, timed.
    static func send(_ rig: Rig, _ mock: MockServerProcess, reconnectBaseMs: Int, reconnectMaxMs: Int,
                     _ extra: [String] = []) throws -> (run: CampaignRun, seconds: Double) {
        let out = rig.scratch.path("out-\(UUID().uuidString.prefix(8))")
        var arguments = rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: rig.csv, out: out)
        for (flag, value) in [("--reconnect-base-ms", reconnectBaseMs), ("--reconnect-max-ms", reconnectMaxMs)] {
            if let index = arguments.firstIndex(of: flag) { arguments[index + 1] = "\(value)" }
        }
        let started = Date()
        let result = try Binary.run(arguments + extra)
        return (CampaignRun(result: result, outDirectory: out), Date().timeIntervalSince(started))
    }

    /// Device tokens the mock answered 200 more than once (from its own record of every answer).
    static func tokensDeliveredTwice(_ mock: MockServerProcess) throws -> [String: Int] {
        var delivered: [String: Int] = [:]
        for record in try mock.records() where record["status"] as? Int == 200 {
            delivered[record["device_token"] as? String ?? "", default: 0] += 1
        }
        return delivered.filter { $0.value > 1 }
    }

    @Test func goawayEveryFewHundredStreamsKeepsFullSpeedAndDeliversEachRowOnce() throws {
        let rows = 10_000
        let rig = try Rig(rows: rows)
        // A backoff that would cost seconds per connection if an orderly end counted as a failure.
        let clean = try rig.mock()
        let cleanRun = try Self.send(rig, clean, reconnectBaseMs: 200, reconnectMaxMs: 2_000)
        clean.stop()
        #expect(cleanRun.run.result.status == 0, "\(cleanRun.run.result.stderr)")
        try cleanRun.run.checkEveryRowExactlyOnce(rows: rows)

        let rotating = try rig.mock(["--goaway-after", "300"])
        let rotated = try Self.send(rig, rotating, reconnectBaseMs: 200, reconnectMaxMs: 2_000)
        rotating.stop()
        #expect(rotated.run.result.status == 0, "\(rotated.run.result.stderr)")
        try rotated.run.checkEveryRowExactlyOnce(rows: rows)
        #expect(try rotated.run.summary["delivered"] as? Int == rows)
        let connections = try rotating.stats()["connections"] as? Int ?? 0
        #expect(connections >= rows / 300, "the server rotated the connections: \(connections)")
        // About twice the clean run at most; the margin is for a machine shared with other builds.
        #expect(rotated.seconds <= 2 * cleanRun.seconds + 2,
                "with GOAWAYs \(rotated.seconds) s, clean \(cleanRun.seconds) s")
        #expect(try Self.tokensDeliveredTwice(rotating).isEmpty)
    }

    @Test func noRowIsDeliveredTwiceWhenGoawayComesWithAnswersStillPending() throws {
        let rows = 6_000
        let rig = try Rig(rows: rows)
        // Latency keeps streams at or below last-stream-id unanswered when the GOAWAY goes out:
        // the server must finish them, and the client must wait for them, not resend them.
        let mock = try rig.mock(["--goaway-after", "250", "--latency-ms", "2", "--latency-jitter-ms", "8"])
        let (run, _) = try Self.send(rig, mock, reconnectBaseMs: 20, reconnectMaxMs: 200)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: rows)
        #expect(try run.summary["delivered"] as? Int == rows)
        let twice = try Self.tokensDeliveredTwice(mock)
        #expect(twice.isEmpty, "\(twice.count) tokens answered 200 twice")
        // No connection was lost: nothing needed a resend after a connection loss.
        let resent = try run.records.filter { $0["retried_after_connection_loss"] as? Bool == true }
        #expect(resent.isEmpty, "\(resent.count) rows resent after a connection loss")
        #expect(try (mock.stats()["connections"] as? Int ?? 0) >= rows / 250)
    }

    @Test func theEmbeddedMockRotatingConnectionsWithManyStreamsInFlightDeliversNoRowTwice() throws {
        // The bad night's setting: the defaults' many streams per connection, so a GOAWAY leaves
        // hundreds of the client's requests unread in the server's socket.
        let rows = 20_000
        let rig = try Rig(rows: rows)
        let record = rig.scratch.path("embedded-record.jsonl.zst")
        let out = rig.scratch.path("out-embedded")
        let result = try Binary.run(["send", "--input", rig.csv, "--endpoint", "mock", "--mock-option", "goaway-after=1000",
                                     "--mock-option", "record-out=\(record)", "--progress", "never", "--out", out])
        let run = CampaignRun(result: result, outDirectory: out)
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: rows)
        #expect(try run.summary["delivered"] as? Int == rows)
        var delivered: [String: Int] = [:]
        for answer in try ZstdCLI.jsonLines(record) where answer["status"] as? Int == 200 {
            delivered[answer["device_token"] as? String ?? "", default: 0] += 1
        }
        #expect(delivered.count == rows)
        #expect(delivered.values.filter { $0 > 1 }.isEmpty, "tokens answered 200 twice")
    }

    @Test func goawayAfterEveryRequestStillFinishes() throws {
        let rows = 150
        let rig = try Rig(rows: rows)
        let mock = try rig.mock(["--goaway-after", "1"])
        // The default backoff and a short unreachable timeout: were each orderly end a failure,
        // the waits would outgrow the timeout and the run would end "unreachable".
        let (run, seconds) = try Self.send(rig, mock, reconnectBaseMs: 1_000, reconnectMaxMs: 30_000,
                                           ["--unreachable-timeout", "20"])
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        #expect(!run.result.stderr.contains("unreachable"))
        try run.checkEveryRowExactlyOnce(rows: rows)
        #expect(try run.summary["delivered"] as? Int == rows)
        #expect(seconds < 30, "\(seconds) s")
        #expect(try Self.tokensDeliveredTwice(mock).isEmpty)
    }
}
