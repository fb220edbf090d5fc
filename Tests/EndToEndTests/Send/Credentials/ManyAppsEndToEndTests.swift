import Foundation
import Testing
import TestSupport

/// Issue 18's campaign as an operator with several apps runs it: three keys (A team-scoped for
/// production; B topic-specific for production, apps one and two; C topic-specific for sandbox,
/// app one), one CSV mixing apps and environments, and two mock servers (one per environment)
/// that read the same `[[keys]]` file and enforce Apple's key rules. Everything through the
/// built binary over real TLS.
@Suite(.serialized) struct ManyAppsEndToEndTests {
    static let team = MockServerProcess.teamID
    static let one = "com.example.one", two = "com.example.two", three = "com.example.three"
    static let payload = "\"{\"\"aps\"\":{\"\"alert\"\":\"\"hi\"\"}}\""

    struct Row {
        let token: String
        let topic: String
        var pushType = ""
        var environment = ""
        var keyID = ""
    }

    /// Where each kind of row must go: the key that signs it and its environment's server, or
    /// its rejection reason.
    enum Expected: Equatable {
        case sent(key: String, environment: String)
        case rejected(String)
    }

    struct Setup {
        let scratch: TemporaryDirectory
        let keys: [String: String]  // key id -> .p8 path

        init() throws {
            scratch = try TemporaryDirectory()
            var keys: [String: String] = [:]
            for id in ["AAAAAAAAA1", "BBBBBBBBB2", "CCCCCCCCC3"] { keys[id] = try scratch.signingKey("AuthKey_\(id).p8") }
            self.keys = keys
        }

        /// `[[keys]]` of A, B and C (`leaving` one out: the server then does not know it).
        func keysFile(_ name: String, leaving missing: String? = nil) throws -> String {
            let entries = [
                ("AAAAAAAAA1", "environment = \"production\""),
                ("BBBBBBBBB2", "environment = \"production\"\ntopics = [\"\(ManyAppsEndToEndTests.one)\", \"\(ManyAppsEndToEndTests.two)\"]"),
                ("CCCCCCCCC3", "environment = \"sandbox\"\ntopics = [\"\(ManyAppsEndToEndTests.one)\"]"),
            ].filter { $0.0 != missing }
            return try scratch.write(name, entries.map { id, rest in
                "[[keys]]\nfile = \"\(keys[id]!)\"\nteam-id = \"\(ManyAppsEndToEndTests.team)\"\n\(rest)\n"
            }.joined(separator: "\n"))
        }

        func csv(_ rows: [Row]) throws -> String {
            let lines = rows.map { "\($0.token),\($0.topic),\($0.pushType),\($0.environment),\($0.keyID),\(ManyAppsEndToEndTests.payload)" }
            return try scratch.write("campaign-\(UUID().uuidString.prefix(6)).csv",
                                     (["device_token,topic,push_type,environment,key_id,payload"] + lines).joined(separator: "\n") + "\n")
        }

        func mock(_ environment: String, keysFile: String, extra: [String] = []) throws -> MockServerProcess {
            let topics = [ManyAppsEndToEndTests.one, ManyAppsEndToEndTests.two, ManyAppsEndToEndTests.three].flatMap { ["--topic", $0] }
            return try MockServerProcess(scratch: scratch, keyFile: keys["AAAAAAAAA1"]!,
                                         extra: topics + extra,
                                         authentication: ["--keys-file", keysFile, "--environment", environment])
        }

        func send(input: String, keysFile: String, production: MockServerProcess, sandbox: MockServerProcess,
                  flags: [String] = []) throws -> CampaignRun {
            let out = scratch.path("out-\(UUID().uuidString.prefix(6))")
            let trust = try scratch.write("cas-\(UUID().uuidString.prefix(6)).pem",
                                          try String(contentsOfFile: production.caFile, encoding: .utf8)
                                          + String(contentsOfFile: sandbox.caFile, encoding: .utf8))
            let arguments = ["send", "--input", input, "--keys-file", keysFile, "--progress", "never", "--out", out,
                             "--endpoint", "production=\(production.endpoint)", "--endpoint", "sandbox=\(sandbox.endpoint)",
                             "--ca-file", trust] + flags
            return CampaignRun(result: try Binary.run(arguments, environment: ProxyTests.environment()), outDirectory: out)
        }
    }

    static func token(_ index: Int) -> String { String(format: "%064x", 0xabc0000 + index) }

    /// The mixed campaign and where each row must end.
    static func campaign() -> [(Row, Expected)] {
        var rows: [(Row, Expected)] = []
        func add(_ count: Int, _ make: (String) -> Row, _ expected: Expected) {
            for _ in 0..<count { rows.append((make(token(rows.count + 1)), expected)) }
        }
        let b = Expected.sent(key: "BBBBBBBBB2", environment: "production")
        add(30, { Row(token: $0, topic: one) }, b)                                        // run's environment, app one: B
        add(20, { Row(token: $0, topic: two, environment: "production") }, b)             // app two: B
        add(10, { Row(token: $0, topic: one + ".voip", pushType: "voip") }, b)            // VoIP of app one: B
        add(25, { Row(token: $0, topic: three) }, .sent(key: "AAAAAAAAA1", environment: "production"))  // team-scoped A
        add(5, { Row(token: $0, topic: one, keyID: "AAAAAAAAA1") }, .sent(key: "AAAAAAAAA1", environment: "production"))
        add(20, { Row(token: $0, topic: one, environment: "development") }, .sent(key: "CCCCCCCCC3", environment: "sandbox"))
        add(10, { Row(token: $0, topic: one + ".voip", pushType: "voip", environment: "sandbox") },
            .sent(key: "CCCCCCCCC3", environment: "sandbox"))
        add(15, { Row(token: $0, topic: two, environment: "sandbox") }, .rejected("NoCredentialsForTopic"))
        add(10, { Row(token: $0, topic: three, environment: "sandbox") }, .rejected("NoCredentialsForTopic"))
        add(3, { Row(token: $0, topic: one, environment: "staging") }, .rejected("InvalidEnvironment"))
        add(2, { Row(token: $0, topic: one, keyID: "ZZZZZZZZZ9") }, .rejected("UnknownKeyId"))
        return rows
    }

    @Test func eachRowIsSignedByTheKeyTheRulesPickAndSentToItsEnvironmentsServerOnly() throws {
        let setup = try Setup()
        let keysFile = try setup.keysFile("keys.toml")
        let production = try setup.mock("production", keysFile: keysFile)
        let sandbox = try setup.mock("sandbox", keysFile: keysFile)
        defer {
            production.stop()
            sandbox.stop()
        }
        let campaign = Self.campaign()
        let run = try setup.send(input: try setup.csv(campaign.map(\.0)), keysFile: keysFile,
                                 production: production, sandbox: sandbox, flags: ["--connections", "4"])
        production.stop()
        sandbox.stop()
        #expect(run.result.status == 0, "\(run.result.stdout)\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: campaign.count)

        // What each server answered, by token: signed by the expected key, in its environment only.
        var served: [String: (environment: String, key: String?, status: Int?)] = [:]
        for (environment, server) in [("production", production), ("sandbox", sandbox)] {
            for request in try server.records() {
                let token = request["device_token"] as? String ?? "?"
                #expect(served[token] == nil, "\(token) was sent more than once")
                served[token] = (environment, request["key_id"] as? String, request["status"] as? Int)
            }
        }
        let records = try run.records
        let byRow = Dictionary(records.map { ($0["row"] as? Int ?? 0, $0) }, uniquingKeysWith: { first, _ in first })
        for (index, (row, expected)) in campaign.enumerated() {
            let record = byRow[index + 1] ?? [:]
            switch expected {
            case .sent(let key, let environment):
                #expect(served[row.token]?.environment == environment, "row \(index + 1) (\(row.topic)) went to \(environment)")
                #expect(served[row.token]?.key == key, "row \(index + 1) (\(row.topic)) signed by \(key)")
                #expect(served[row.token]?.status == 200)
                #expect(record["outcome"] as? String == "delivered")
                #expect(record["key_id"] as? String == key && record["environment"] as? String == environment)
                #expect((record["apns_unique_id"] != nil) == (environment == "sandbox"),
                        "row \(index + 1): sandbox answers carry apns-unique-id, production's none")
            case .rejected(let reason):
                #expect(served[row.token] == nil, "row \(index + 1) was sent")
                #expect(record["outcome"] as? String == "rejected" && record["reason"] as? String == reason,
                        "row \(index + 1): \(record)")
            }
        }
        #expect(served.values.allSatisfy { $0.status == 200 }, "no UnrelatedKeyIdInToken, BadEnvironmentKeyIdInToken or TopicDisallowed")
        let summary = try run.summary
        let byKey = summary["by_key"] as? [String: Any]
        #expect(byKey?.keys.sorted() == ["AAAAAAAAA1", "BBBBBBBBB2", "CCCCCCCCC3"], "\(summary)")
        #expect(run.result.stderr.contains(Self.two) && run.result.stderr.contains("sandbox"),
                "the rows no key serves are named on stderr: \(run.result.stderr)")
    }

    @Test func aKeyTheServerRefusesAbortsOnlyItsOwnRowsAfterOneRefusalPerConnection() throws {
        let setup = try Setup()
        let keysFile = try setup.keysFile("keys.toml")
        // The production server does not know B: its tokens are InvalidProviderToken there.
        let production = try setup.mock("production", keysFile: try setup.keysFile("server-keys.toml", leaving: "BBBBBBBBB2"))
        let sandbox = try setup.mock("sandbox", keysFile: keysFile)
        defer {
            production.stop()
            sandbox.stop()
        }
        let campaign = Self.campaign().filter { if case .sent = $0.1 { true } else { false } }
        // Three groups with rows (A, B, C) and three connections: one each.
        let run = try setup.send(input: try setup.csv(campaign.map(\.0)), keysFile: keysFile,
                                 production: production, sandbox: sandbox, flags: ["--connections", "3"])
        production.stop()
        sandbox.stop()
        #expect(run.result.status == 2, "\(run.result.stdout)\(run.result.stderr)")
        #expect(run.result.stderr.contains("BBBBBBBBB2") && run.result.stderr.contains("InvalidProviderToken"),
                "the message names the key and the reason: stdout \(run.result.stdout) stderr \(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: campaign.count)
        let records = try run.records
        for (index, (_, expected)) in campaign.enumerated() {
            let record = records.first { $0["row"] as? Int == index + 1 } ?? [:]
            if expected == .sent(key: "BBBBBBBBB2", environment: "production") {
                #expect(record["outcome"] as? String == "aborted" && record["reason"] as? String == "InvalidProviderToken",
                        "row \(index + 1): \(record)")
            } else {
                #expect(record["outcome"] as? String == "delivered", "row \(index + 1): \(record)")
            }
        }
        let refused = try production.records().filter { $0["status"] as? Int == 403 }
        #expect(refused.count == 1, "one refused answer on B's one connection, not one per row: \(refused.count)")
        #expect(try run.deadTokens.isEmpty)
    }

    @Test func environmentFallbackDeliversSandboxTokensListedAsProductionAndKeepsThemOutOfDeadTokens() throws {
        let setup = try Setup()
        let keysFile = try setup.keysFile("keys.toml")
        let rows = (1...40).map { Row(token: Self.token($0), topic: Self.one) }
        // Rows 1-10 are sandbox tokens (production refuses them), rows 11-13 are dead in both.
        let sandboxTokens = rows[0..<10].map(\.token), deadTokens = rows[10..<13].map(\.token)
        let productionRefuses = try setup.scratch.write("production-respond.csv",
            (sandboxTokens + deadTokens).map { "\($0),400,BadDeviceToken,1000" }.joined(separator: "\n") + "\n")
        let sandboxRefuses = try setup.scratch.write("sandbox-respond.csv",
            (deadTokens + rows[13...].map(\.token)).map { "\($0),400,BadDeviceToken,1000" }.joined(separator: "\n") + "\n")
        let production = try setup.mock("production", keysFile: keysFile, extra: ["--respond-file", productionRefuses])
        let sandbox = try setup.mock("sandbox", keysFile: keysFile, extra: ["--respond-file", sandboxRefuses])
        defer {
            production.stop()
            sandbox.stop()
        }
        let run = try setup.send(input: try setup.csv(rows), keysFile: keysFile, production: production, sandbox: sandbox,
                                 flags: ["--environment-fallback", "--connections", "2"])
        production.stop()
        sandbox.stop()
        #expect(run.result.status == 0, "\(run.result.stdout)\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: rows.count)
        let records = try run.records
        for record in records {
            let row = record["row"] as? Int ?? 0
            switch row {
            case 1...10:
                #expect(record["outcome"] as? String == "delivered" && record["environment"] as? String == "sandbox"
                        && record["environment_fallback_from"] as? String == "production", "row \(row): \(record)")
            case 11...13:
                #expect(record["outcome"] as? String == "bad_token", "row \(row): \(record)")
            default:
                #expect(record["outcome"] as? String == "delivered" && record["environment_fallback_from"] == nil,
                        "row \(row): \(record)")
            }
        }
        #expect(try run.deadTokens.map { $0[0] }.sorted() == deadTokens.sorted(), "only tokens refused in both")
        #expect(try sandbox.records().count == 13, "only the rows production refused were tried in sandbox")
        // The report page counts the dead tokens by environment: the three were refused last in sandbox.
        let page = try String(contentsOfFile: run.outDirectory + "/report.html", encoding: .utf8)
        #expect(page.contains("data-dead-by-environment=\"BadDeviceToken sandbox\" data-count=\"3\"")
                && page.components(separatedBy: "data-dead-by-environment=").count == 2, "dead tokens by environment on report.html")
    }
}
