import Foundation
import Testing
import TestSupport

/// Several signing keys and both environments from the command line to the mock (issue 18), over
/// real TLS with keys made at test time: `[[keys]]` in a job file against the embedded mocks,
/// `--endpoint production=…/sandbox=…` against two mock servers reading the same `--keys-file`,
/// and the mock's BadEnvironmentKeyIdInToken as `send` sees it. The CSVs have no `environment`
/// column: every row belongs to the run's environment (`ManyAppsEndToEndTests` mixes them).
@Suite(.serialized) struct SeveralKeysEndToEndTests {
    static let topic = MockServerProcess.topic
    static let team = MockServerProcess.teamID

    /// A campaign of `rows` rows and the keys AuthKey_AAAAAAAAA1.p8 and AuthKey_BBBBBBBBB2.p8.
    struct Setup {
        let scratch: TemporaryDirectory
        let csv: String
        let keys: [String]

        init(rows: Int) throws {
            scratch = try TemporaryDirectory()
            csv = scratch.path("campaign.csv")
            let gen = try Binary.run(["gen", "--rows", "\(rows)", "--out", csv, "--seed", "7"])
            try #require(gen.status == 0, "gen failed: \(gen.stderr)")
            let scratch = self.scratch
            keys = try ["AAAAAAAAA1", "BBBBBBBBB2"].map { try scratch.signingKey("AuthKey_\($0).p8") }
        }

        /// `[[keys]]`: A team-scoped (for production unless `firstEnvironment` says otherwise), B
        /// for sandbox and the campaign's topic only.
        func keysFile(_ name: String = "keys.toml", extra: String = "", firstEnvironment: String = "production") throws -> String {
            try scratch.write(name, extra + """

                [[keys]]
                file = "\(keys[0])"
                team-id = "\(team)"
                environment = "\(firstEnvironment)"

                [[keys]]
                file = "\(keys[1])"
                team-id = "\(team)"
                environment = "sandbox"
                topics = ["\(topic)"]
                """)
        }

        func send(_ name: String, _ flags: [String]) throws -> CampaignRun {
            let out = scratch.path(name)
            let arguments = ["send", "--input", csv, "--topic", topic, "--progress", "never", "--out", out] + flags
            return CampaignRun(result: try Binary.run(arguments, environment: ProxyTests.environment()), outDirectory: out)
        }

        func mock(_ environment: String, keysFile: String) throws -> MockServerProcess {
            try MockServerProcess(scratch: scratch, keyFile: keys[0],
                                  authentication: ["--keys-file", keysFile, "--environment", environment])
        }
    }

    static func outcomes(_ run: CampaignRun) throws -> [String: Int] {
        try run.records.reduce(into: [:]) { $0[$1["outcome"] as? String ?? "?", default: 0] += 1 }
    }

    @Test func aJobFilesKeysRehearseAgainstOneEmbeddedMockPerEnvironment() throws {
        let setup = try Setup(rows: 300)
        let record = setup.scratch.path("record.jsonl.zst")
        let job = try setup.keysFile("job.toml", extra: "connections = 1\n[mock]\nrecord-out = \"\(record)\"\n")
        let run = try setup.send("out", ["--config", job, "--endpoint", "mock"])
        #expect(run.result.status == 0, "\(run.result.stdout)\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 300)
        #expect(try Self.outcomes(run) == ["delivered": 300])
        // Two mocks (a key names sandbox), each with its own record file; production rows reach
        // the production mock only, signed by the production key, which it accepts.
        let production = try ZstdCLI.jsonLines(record)
        #expect(production.count == 300)
        #expect(production.allSatisfy { $0["key_id"] as? String == "AAAAAAAAA1" && $0["status"] as? Int == 200 })
        let sandboxRecord = setup.scratch.path("record.sandbox.jsonl.zst")
        #expect(FileManager.default.fileExists(atPath: sandboxRecord), "the sandbox mock ran with a file of its own")
        #expect(try ZstdCLI.jsonLines(sandboxRecord).isEmpty)
    }

    @Test func endpointsPerEnvironmentSendTheRunsRowsToItsEnvironmentsServerOnly() throws {
        let setup = try Setup(rows: 250)
        let keysFile = try setup.keysFile(firstEnvironment: "any")
        let production = try setup.mock("production", keysFile: keysFile)
        let sandbox = try setup.mock("sandbox", keysFile: keysFile)
        defer {
            production.stop()
            sandbox.stop()
        }
        let trust = try setup.scratch.write("both-cas.pem", try String(contentsOfFile: production.caFile, encoding: .utf8)
                                            + String(contentsOfFile: sandbox.caFile, encoding: .utf8))
        let run = try setup.send("out", ["--keys-file", keysFile, "--endpoint", "production=\(production.endpoint)",
                                         "--endpoint", "sandbox=\(sandbox.endpoint)", "--environment", "sandbox",
                                         "--connections", "1", "--ca-file", trust])
        production.stop()
        sandbox.stop()
        #expect(run.result.status == 0, "\(run.result.stdout)\(run.result.stderr)")
        try run.checkEveryRowExactlyOnce(rows: 250)
        #expect(try Self.outcomes(run) == ["delivered": 250])
        #expect(try run.records.allSatisfy { $0["endpoint"] as? String == sandbox.endpoint })
        #expect(try production.records().isEmpty, "no row of a sandbox run reaches the production server")
        let answered = try sandbox.records()
        #expect(answered.count == 250)
        // B is the sandbox key for the campaign's topic: a topic-specific key wins over team-scoped A.
        #expect(answered.allSatisfy { $0["status"] as? Int == 200 && $0["key_id"] as? String == "BBBBBBBBB2" })
    }

    @Test func aKeyUsedInTheWrongEnvironmentIsRefusedAndItsRowsAborted() throws {
        let setup = try Setup(rows: 120)
        let keysFile = try setup.keysFile()
        // A server that plays sandbox, given as the production run's plain endpoint.
        let sandbox = try setup.mock("sandbox", keysFile: keysFile)
        defer { sandbox.stop() }
        let run = try setup.send("out", ["--key-file", setup.keys[0], "--team-id", Self.team,
                                         "--endpoint", sandbox.endpoint, "--ca-file", sandbox.caFile])
        sandbox.stop()
        #expect(run.result.status == 2, "\(run.result.stdout)\(run.result.stderr)")
        #expect(run.result.stdout.contains("BadEnvironmentKeyIdInToken"), "\(run.result.stdout)")
        try run.checkEveryRowExactlyOnce(rows: 120)
        let records = try run.records
        #expect(records.allSatisfy { $0["outcome"] as? String == "aborted" && $0["reason"] as? String == "BadEnvironmentKeyIdInToken" })
        let refused = try sandbox.records()
        #expect(!refused.isEmpty && refused.allSatisfy { $0["reason"] as? String == "BadEnvironmentKeyIdInToken"
            && $0["key_id"] as? String == "AAAAAAAAA1" })
        #expect(try run.deadTokens.isEmpty, "a refused key burns no token")
    }

    @Test func severalCertificatesRehearseAgainstTheEmbeddedMockWhichTrustsEachAndServesTheirApps() throws {
        let setup = try Setup(rows: 100)
        var flags: [String] = []
        for app in ["com.example.one", "com.example.two"] {
            let certificate = setup.scratch.path("\(app).crt"), key = setup.scratch.path("\(app).key")
            let made = try Command.run("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                                                             "-nodes", "-keyout", key, "-out", certificate, "-days", "1",
                                                             "-subj", "/UID=\(app)/CN=Apple Push Services: \(app)"])
            try #require(made.status == 0, "openssl req: \(made.stderr)")
            flags += ["--cert-file", certificate, "--cert-key-file", key]
        }
        for app in ["com.example.one", "com.example.two"] {
            let out = setup.scratch.path("out-\(app)")
            let result = try Binary.run(["send", "--input", setup.csv, "--topic", app, "--progress", "never", "--out", out,
                                         "--endpoint", "mock", "--connections", "1"] + flags,
                                        environment: ProxyTests.environment())
            let run = CampaignRun(result: result, outDirectory: out)
            #expect(result.status == 0, "\(app): \(result.stdout)\(result.stderr)")
            try run.checkEveryRowExactlyOnce(rows: 100)
            #expect(try Self.outcomes(run) == ["delivered": 100], "the mock serves both certificates' apps")
        }
    }

    @Test func feedbackRefusesSeveralCertificatesAndTheMocksKeyMistakesNameTheirPlace() throws {
        let setup = try Setup(rows: 1)
        let feedback = try Binary.run(["feedback", "--cert-file", "a.pem", "--cert-file", "b.pem", "--cert-key-file", "a.key",
                                       "--out", setup.scratch.path("dead.csv")])
        #expect(feedback.status == 1 && feedback.stderr.contains("feedback takes one certificate"), "\(feedback.stderr)")
        let bad = try setup.scratch.write("bad.toml", "[[keys]]\nfile = \"\(setup.keys[0])\"\nteam-id = \"\(Self.team)\"\nenvironment = \"staging\"\n")
        let cases: [([String], String)] = [
            (["--keys-file", bad], "--keys-file \(bad): [[keys]] entry 1 (\(setup.keys[0])): environment \"staging\""),
            (["--verify-key-file", setup.keys[0], "--verify-key-file", setup.keys[1]], "--verify-key-file needs --team-id"),
            (["--verify-key-file", setup.keys[0], "--verify-key-file", setup.keys[0], "--team-id", Self.team],
             "key id AAAAAAAAA1 is already given by --verify-key-file"),
        ]
        for (flags, expected) in cases {
            let result = try Binary.run(["mock-server"] + flags)
            #expect(result.status == 1, "\(flags)")
            #expect(result.stderr.contains(expected), "\(flags): \(result.stderr)")
        }
    }
}
