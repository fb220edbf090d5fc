import Foundation
import Testing
import TestSupport

/// A run-wide value refused (`--topic` answered TopicDisallowed `--abort-after` times) with several
/// keys: whether APNs accepts a topic depends on the key, so the refusal stops only the rows of the
/// key it was refused for; the other keys' rows that use the same `--topic` are still sent.
@Suite(.serialized) struct GroupRunWideRefusalTests {
    typealias Campaign = ManyAppsEndToEndTests

    @Test func aTopicRefusedForOneKeyStopsOnlyThatKeysRowsThatUseIt() throws {
        let setup = try Campaign.Setup()
        func keys(_ name: String, topicOfB: String) throws -> String {
            try setup.scratch.write(name, [("AAAAAAAAA1", "environment = \"sandbox\""),
                                           ("BBBBBBBBB2", "environment = \"production\"\ntopics = [\"\(topicOfB)\"]")].map { id, rest in
                "[[keys]]\nfile = \"\(setup.keys[id]!)\"\nteam-id = \"\(Campaign.team)\"\n\(rest)\n"
            }.joined(separator: "\n"))
        }
        // The run believes B serves app one; Apple (the servers) says B serves app two only.
        let senderKeys = try keys("keys.toml", topicOfB: Campaign.one)
        let serverKeys = try keys("server-keys.toml", topicOfB: Campaign.two)
        let production = try setup.mock("production", keysFile: serverKeys)
        // A's answers come late: its rows still wait when B's refusal arrives.
        let sandbox = try setup.mock("sandbox", keysFile: serverKeys, extra: ["--latency-ms", "300"])
        defer {
            production.stop()
            sandbox.stop()
        }
        // Rows 1-20: production, B, the run's --topic. Rows 21-60: sandbox, A, the same --topic.
        let rows = (1...60).map { Campaign.Row(token: Campaign.token($0), topic: "", environment: $0 <= 20 ? "production" : "sandbox") }
        let run = try setup.send(input: try setup.csv(rows), keysFile: senderKeys, production: production, sandbox: sandbox,
                                 flags: ["--topic", Campaign.one, "--connections", "2"])
        production.stop()
        sandbox.stop()
        #expect(run.result.status == 2, "\(run.result.stdout)\(run.result.stderr)")
        #expect(run.result.stderr.contains("stopped sending the rows of key BBBBBBBBB2 in production that use the run's --topic"),
                "\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: rows.count)
        for record in try run.records {
            let row = record["row"] as? Int ?? 0
            if row <= 20 {
                #expect(record["outcome"] as? String == "aborted" && record["reason"] as? String == "TopicDisallowed",
                        "row \(row): \(record)")
            } else {
                #expect(record["outcome"] as? String == "delivered" && record["key_id"] as? String == "AAAAAAAAA1",
                        "row \(row), another key's, goes on: \(record)")
            }
        }
        #expect(try sandbox.records().count == 40, "every row of A was sent")
        let refused = try production.records().filter { $0["reason"] as? String == "TopicDisallowed" }.count
        #expect(refused >= 1 && refused <= 2, "B's rows stop after the --abort-after streak: \(refused) sent")
    }
}
