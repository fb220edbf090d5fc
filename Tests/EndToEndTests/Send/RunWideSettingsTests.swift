import Foundation
import Testing
import TestSupport

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
        let scratch = try TemporaryDirectory()
        let key = try scratch.signingKey()
        var lines = ["device_token,payload,topic"]
        for row in 1...600 {
            // Distinct tokens: a repeated one would be rejected DuplicateToken.
            let token = String(repeating: String(format: "%04x", row), count: 16)
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

    @Test func aRefusedRunWideTopicStopsOnlyTheRowsThatUseIt() throws {
        let scratch = try TemporaryDirectory()
        let key = try scratch.signingKey()
        var lines = ["device_token,payload,topic"]
        for row in 1...1_000 {
            let token = String(repeating: String(format: "%04x", row), count: 16)
            // Every third row names the served topic itself; the others use the (wrong) --topic.
            let topic = row % 3 == 0 ? MockServerProcess.topic : ""
            lines.append("\(token),\"{\"\"aps\"\":{\"\"alert\"\":\"\"hi\"\"}}\",\(topic)")
        }
        let csv = try scratch.write("mixed-topics.csv", lines.joined(separator: "\n") + "\n")
        let mock = try MockServerProcess(scratch: scratch, keyFile: key)
        let out = scratch.path("out-mixed-topics")
        let run = CampaignRun(result: try Binary.run([
            "send", "--input", csv, "--endpoint", mock.endpoint, "--ca-file", mock.caFile, "--key-file", key,
            "--key-id", MockServerProcess.keyID, "--team-id", MockServerProcess.teamID, "--topic", "com.example.other",
            "--connections", "2", "--progress", "never", "--out", out]), outDirectory: out)
        mock.stop()
        #expect(run.result.status == 2, "\(run.result.stderr)")
        #expect(run.result.stderr.contains("stopped sending the rows that use the run's --topic"), "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 1_000)
        let records = try run.records
        let ownTopic = records.filter { ($0["row"] as? Int ?? 0) % 3 == 0 }
        let runTopic = records.filter { ($0["row"] as? Int ?? 0) % 3 != 0 }
        #expect(ownTopic.allSatisfy { $0["outcome"] as? String == "delivered" }, "rows with a topic of their own go on")
        #expect(runTopic.allSatisfy { $0["outcome"] as? String == "aborted" && $0["reason"] as? String == "TopicDisallowed" })
        let sentWithWrongTopic = try mock.records().filter { $0["reason"] as? String == "TopicDisallowed" }.count
        #expect(sentWithWrongTopic <= 10 * 2, "rows burnt: \(sentWithWrongTopic)")
    }
}
