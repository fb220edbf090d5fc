import Foundation
import Testing

/// A misconfigured campaign must not burn the list: a run-wide value APNs refuses stops the run at
/// its first refusal, with a handful of rows sent per connection, while a row's own column that APNs
/// refuses fails that row only.
@Suite(.serialized) struct RunWideSettingsTests {
    typealias Rig = SendCampaignTests.Rig

    @Test func aWrongRunWideTopicBurnsAtMostAFewRowsPerConnection() throws {
        let rig = try Rig(rows: 10_000)
        let mock = try rig.mock(["--initial-max-streams", "100"])
        let out = rig.scratch.path("out-wrong-topic")
        var arguments = rig.sendArguments(endpoint: mock.endpoint, caFile: mock.caFile, input: rig.csv, out: out)
        arguments[arguments.firstIndex(of: MockServerProcess.topic)!] = "com.example.other"
        arguments += ["--connections", "4"]
        let run = CampaignRun(result: try Binary.run(arguments), outDirectory: out)
        mock.stop()
        #expect(run.result.status == 2, "\(run.result.stderr)")
        #expect(run.result.stderr.contains("TopicDisallowed"))
        try run.checkEveryRowExactlyOnce(rows: 10_000)
        let summary = try run.summary
        #expect(summary["failed"] as? Int == 0)
        #expect(summary["aborted"] as? Int == 10_000)
        let burnt = try mock.records().count
        #expect(burnt >= 1 && burnt <= 10 * 4, "rows sent with the wrong topic: \(burnt)")
    }

    @Test func aRowsOwnRefusedTopicFailsThatRowOnlyAndTheRunGoesOn() throws {
        let scratch = try Scratch()
        let key = try scratch.signingKey()
        var lines = ["device_token,payload,topic"]
        for row in 1...600 {
            let token = String(repeating: String(format: "%02x", row % 256), count: 32)
            let topic = row % 100 == 0 ? "com.example.other" : ""
            lines.append("\(token),\"{\"\"aps\"\":{\"\"alert\"\":\"\"hi \(row)\"\"}}\",\(topic)")
        }
        let csv = try scratch.write("own-topics.csv", lines.joined(separator: "\n") + "\n")
        let mock = try MockServerProcess(scratch: scratch, keyFile: key)
        let out = scratch.path("out-own-topic")
        let run = CampaignRun(result: try Binary.run([
            "send", "--input", csv, "--endpoint", mock.endpoint, "--ca-file", mock.caFile, "--key-file", key,
            "--key-id", MockServerProcess.keyID, "--team-id", MockServerProcess.teamID, "--topic", MockServerProcess.topic,
            "--connections", "2", "--progress", "never", "--out", out]), outDirectory: out)
        mock.stop()
        #expect(run.result.status == 0, "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 600)
        let summary = try run.summary
        #expect(summary["delivered"] as? Int == 594)
        #expect(summary["failed"] as? Int == 6)
        #expect(try run.records.filter { $0["outcome"] as? String == "failed" }
            .allSatisfy { $0["reason"] as? String == "TopicDisallowed" && ($0["row"] as? Int ?? 0) % 100 == 0 })
    }
}
