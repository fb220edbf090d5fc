import Foundation
import Testing
import TestSupport

/// The shipped jobs/many-apps.example.toml rehearsed as its comment says (`--endpoint mock`): the
/// embedded mocks serve every topic the run's keys serve (a team-scoped key any topic, a
/// topic-specific key its own), each in its environment, so a CSV of several apps ends delivered,
/// not half TopicDisallowed. And a row whose `key_id` names a key of the other environment is
/// warned of as that, not as a topic no key serves.
@Suite(.serialized) struct ManyAppsRehearsalTests {
    static let root = MetricsTests.root
    static let one = "com.example.one", two = "com.example.two", three = "com.example.three"

    /// The shipped example with its key files replaced by fresh keys in `scratch`.
    static func jobFile(_ scratch: TemporaryDirectory) throws -> String {
        let teamKey = try scratch.signingKey("AuthKey_ABCDE12345.p8")
        let sandboxKey = try scratch.signingKey("sandbox-push.p8")
        let shipped = try String(contentsOfFile: root + "/jobs/many-apps.example.toml", encoding: .utf8)
        try #require(shipped.contains("\"keys/AuthKey_ABCDE12345.p8\"") && shipped.contains("\"keys/sandbox-push.p8\""))
        return try scratch.write("many-apps.toml", shipped
            .replacingOccurrences(of: "\"keys/AuthKey_ABCDE12345.p8\"", with: "\"\(teamKey)\"")
            .replacingOccurrences(of: "\"keys/sandbox-push.p8\"", with: "\"\(sandboxKey)\""))
    }

    static func send(_ scratch: TemporaryDirectory, input: String, _ flags: [String] = []) throws -> CampaignRun {
        let out = scratch.path("out-\(UUID().uuidString.prefix(6))")
        let arguments = ["send", "--config", try jobFile(scratch), "--input", input, "--endpoint", "mock",
                         "--progress", "never", "--out", out] + flags
        return CampaignRun(result: try Binary.run(arguments, environment: ProxyTests.environment()), outDirectory: out)
    }

    @Test func rehearsingTheManyAppsExampleWithTheEmbeddedMockDeliversEveryAppsRows() throws {
        let scratch = try TemporaryDirectory()
        // Apps one, two and three (team-scoped production key) and one and two (the sandbox key), in
        // production, sandbox and the run's environment (the column empty).
        let rows = 2_000
        var lines = ["device_token,topic,environment,payload"]
        for index in 0..<rows {
            let sandbox = index % 3 == 1
            let topic = sandbox ? [Self.one, Self.two][index % 2] : [Self.one, Self.two, Self.three][index % 3]
            let environment = sandbox ? "sandbox" : index % 2 == 0 ? "production" : ""
            lines.append("\(String(format: "%064x", 0xabc0000 + index)),\(topic),\(environment),\(ManyAppsEndToEndTests.payload)")
        }
        let input = try scratch.write("apps.csv", lines.joined(separator: "\n") + "\n")
        let run = try Self.send(scratch, input: input)
        #expect(run.result.status == 0, "\(run.result.stdout)\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: rows)
        let records = try run.records
        let refused = records.filter { $0["outcome"] as? String != "delivered" }
        #expect(refused.isEmpty, "\(refused.count) rows not delivered, e.g. \(refused.prefix(3))")
        #expect(!records.contains { $0["reason"] as? String == "TopicDisallowed" })
        #expect(try run.summary["delivered"] as? Int == rows)
        // Every app's rows went to their environment's mock, each with the key that serves it there.
        let sandboxRows = records.filter { $0["environment"] as? String == "sandbox" }
        #expect(sandboxRows.count == (0..<rows).filter { $0 % 3 == 1 }.count)
        #expect(sandboxRows.allSatisfy { $0["key_id"] as? String == "FGHIJ67890" }, "\(sandboxRows.prefix(2))")
        #expect(records.filter { $0["environment"] as? String == "production" }.allSatisfy { $0["key_id"] as? String == "ABCDE12345" })
    }

    @Test func aRowWhoseKeyIdNamesAKeyOfTheOtherEnvironmentIsWarnedOfAsThatNotAsAMissingTopic() throws {
        let scratch = try TemporaryDirectory()
        let token = { (index: Int) in String(format: "%064x", 0xdef0000 + index) }
        var lines = ["device_token,topic,environment,key_id,payload"]
        // Sandbox rows naming the production-only key: the sandbox key serves their topic, but not the key they name.
        for index in 0..<4 { lines.append("\(token(index)),\(Self.one),sandbox,ABCDE12345,\(ManyAppsEndToEndTests.payload)") }
        for index in 4..<10 { lines.append("\(token(index)),\(Self.one),production,ABCDE12345,\(ManyAppsEndToEndTests.payload)") }
        let input = try scratch.write("keys.csv", lines.joined(separator: "\n") + "\n")
        let run = try Self.send(scratch, input: input)
        #expect(run.result.status == 0, "\(run.result.stdout)\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 10)
        let stderr = run.result.stderr
        #expect(stderr.contains("rows for sandbox (their environment column) name key_id ABCDE12345, which is restricted to production"),
                "\(stderr)")
        #expect(!stderr.contains("no key or certificate serves topic"), "the topic is served: \(stderr)")
        let rejected = try run.records.filter { $0["outcome"] as? String == "rejected" }
        #expect(rejected.count == 4 && rejected.allSatisfy { $0["reason"] as? String == "NoCredentialsForTopic" })
        #expect(try run.summary["delivered"] as? Int == 6)
    }
}
