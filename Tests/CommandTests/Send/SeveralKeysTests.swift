import APNs
import Foundation
import Pipeline
import Testing
import TestSupport
import Transport
@testable import apns_bulk

/// Several signing keys on send's command line and in a job file (issue 18): key ids from
/// `--key-id` or Apple's `AuthKey_<KEYID>.p8`, `[[keys]]` tables with their environment, topics
/// and related key, the configuration they fill, and every mistake refused naming where it is.
@Suite struct SeveralKeysTests {
    /// A directory with fresh P-256 keys under Apple's download names, removed when done.
    final class Keys {
        private let directory: TemporaryDirectory

        init(_ ids: [String]) throws {
            directory = try TemporaryDirectory()
            for id in ids {
                try directory.write("AuthKey_\(id).p8", try SigningKey.generate().pkcs8PEM())
            }
        }

        func path(_ name: String) -> String { directory.path(name) }

        func write(_ name: String, _ text: String) throws -> String { try directory.write(name, text) }
    }

    static func message(_ body: () throws -> Void) -> String {
        do { try body() } catch let failure as RunFailure { return failure.message } catch { return "\(error)" }
        return "(no error)"
    }

    static func setup(_ arguments: [String]) throws -> SendSetup {
        let expanded = try JobFile.expand(["send", "--input", "campaign.csv", "--out", "/tmp/never-written"] + arguments)
        return try SendSetup(command: try SendCommand.parse(Array(expanded.dropFirst())))
    }

    @Test func keyIDsComeFromKeyIDForOneFileElseFromApplesDownloadNames() throws {
        let one = try KeyList.commandLine(files: ["keys/push.p8"], keyID: "ABCDE12345", teamID: "TEAM123456")
        #expect(one.map(\.key) == [KeyDescription(file: "keys/push.p8", keyID: "ABCDE12345", teamID: "TEAM123456")])
        let named = try KeyList.commandLine(files: ["a/AuthKey_AAAAAAAAA1.p8", "AuthKey_BBBBBBBBB2.p8"], keyID: nil,
                                            teamID: "TEAM123456")
        #expect(named.map(\.key.keyID) == ["AAAAAAAAA1", "BBBBBBBBB2"])
        #expect(named.allSatisfy { $0.key.teamID == "TEAM123456" }, "--team-id applies to every key")
        #expect(Self.message { _ = try KeyList.commandLine(files: ["AuthKey_AAAAAAAAA1.p8", "push.p8"], keyID: nil, teamID: "TEAM123456") }
            .hasPrefix("--key-file push.p8: no key id: with several --key-file each file must keep Apple's download name AuthKey_<KEYID>.p8"))
        #expect(Self.message { _ = try KeyList.commandLine(files: ["AuthKey_AAAAAAAAA1.p8", "AuthKey_BBBBBBBBB2.p8"], keyID: "AAAAAAAAA1", teamID: "TEAM123456") }
            .hasPrefix("--key-id AAAAAAAAA1 with 2 --key-file: --key-id names one key"))
        #expect(Self.message { _ = try KeyList.commandLine(files: ["AuthKey_AAAAAAAAA1.p8"], keyID: nil, teamID: nil) }
            .hasPrefix("--key-file needs --team-id"))
    }

    @Test func keysTablesAreReadWithTheirEnvironmentTopicsAndRelatedKey() throws {
        let table = try TOMLReader.read("""
            [[keys]]
            file = "AuthKey_AAAAAAAAA1.p8"
            team-id = "TEAM123456"
            [[keys]]
            file = "keys/voip.p8"
            key-id = "BBBBBBBBB2"
            environment = "sandbox"
            topics = ["com.example.one", "com.example.two"]
            related_key_id = "AAAAAAAAA1"
            [[keys]]
            file = "AuthKey_CCCCCCCCC3.p8"
            environment = "any"
            """)
        let entries = try KeyList.entries(in: table, source: "--config job.toml", defaultTeamID: "DEFAULTTM1")
        #expect(entries.map(\.key) == [
            KeyDescription(file: "AuthKey_AAAAAAAAA1.p8", keyID: "AAAAAAAAA1", teamID: "TEAM123456"),
            KeyDescription(file: "keys/voip.p8", keyID: "BBBBBBBBB2", teamID: "DEFAULTTM1", environment: .sandbox,
                           topics: ["com.example.one", "com.example.two"], relatedKeyID: "AAAAAAAAA1"),
            KeyDescription(file: "AuthKey_CCCCCCCCC3.p8", keyID: "CCCCCCCCC3", teamID: "DEFAULTTM1"),
        ])
        #expect(entries[1].origin == "--config job.toml: [[keys]] entry 2 (keys/voip.p8)")
        try KeyList.check(entries)
    }

    @Test func aBadKeysEntryIsRefusedNamingTheFileTheEntryAndTheFix() throws {
        let cases: [(String, String)] = [
            ("key-id = \"ABCDE12345\"", "entry 1: no `file`; give the .p8 key's path"),
            ("file = \"push.p8\"", "entry 1 (push.p8): no `key-id`, and the file name is not Apple's AuthKey_<KEYID>.p8"),
            ("file = \"AuthKey_ABCDE12345.p8\"\nenvironment = \"staging\"", "environment \"staging\": give production, sandbox or any"),
            ("file = \"AuthKey_ABCDE12345.p8\"\ntopics = []", "`topics` must be a non-empty array of bundle ids"),
            ("file = \"AuthKey_ABCDE12345.p8\"\ntopic = \"com.example.app\"", "unknown key `topic`; a key's table holds file, key-id"),
            ("file = \"AuthKey_ABC.p8\"", "key id \"ABC\" is not valid"),
            ("file = 12", "`file` is an integer (12); give a non-empty string"),
        ]
        for (body, expected) in cases {
            let table = try TOMLReader.read("[[keys]]\nteam-id = \"TEAM123456\"\n" + body + "\n")
            let message = Self.message { _ = try KeyList.entries(in: table, source: "--config job.toml", defaultTeamID: nil) }
            #expect(message.hasPrefix("--config job.toml: [[keys]] entry 1"), "\(body): \(message)")
            #expect(message.contains(expected), "\(body): \(message)")
        }
        let noTeam = try TOMLReader.read("[[keys]]\nfile = \"AuthKey_ABCDE12345.p8\"\n")
        #expect(Self.message { _ = try KeyList.entries(in: noTeam, source: "--keys-file k.toml", defaultTeamID: nil) }
            .contains("no `team-id`; add team-id"))
    }

    @Test func aKeyGivenTwiceOrARelatedKeyNotLoadedIsRefused() throws {
        let a = KeyList.Entry(key: KeyDescription(file: "a.p8", keyID: "AAAAAAAAA1", teamID: "TEAM123456"), origin: "entry 1")
        var b = KeyList.Entry(key: KeyDescription(file: "b.p8", keyID: "AAAAAAAAA1", teamID: "TEAM123456"), origin: "entry 2")
        #expect(Self.message { try KeyList.check([a, b]) } == "entry 2: key id AAAAAAAAA1 is already given by entry 1; give each key once")
        b.key.keyID = "BBBBBBBBB2"
        b.key.relatedKeyID = "ZZZZZZZZZ9"
        #expect(Self.message { try KeyList.check([a, b]) }.hasPrefix("entry 2: related-key-id ZZZZZZZZZ9 names no other key of this run"))
        b.key.relatedKeyID = "AAAAAAAAA1"
        try KeyList.check([a, b])
    }

    @Test func severalKeysFillOneCredentialEachAndTheEndpointsOfEachEnvironment() throws {
        let keys = try Keys(["AAAAAAAAA1", "BBBBBBBBB2"])
        let job = try keys.write("job.toml", """
            [[keys]]
            file = "\(keys.path("AuthKey_AAAAAAAAA1.p8"))"
            team-id = "TEAM123456"
            environment = "production"
            [[keys]]
            file = "\(keys.path("AuthKey_BBBBBBBBB2.p8"))"
            team-id = "TEAM123456"
            topics = ["com.example.two"]
            related-key-id = "AAAAAAAAA1"
            """)
        let setup = try Self.setup(["--config", job, "--endpoint", "production=127.0.0.1:2001",
                                    "--endpoint", "sandbox=127.0.0.1:2002", "--environment", "sandbox",
                                    "--environment-fallback"])
        let configuration = setup.configuration
        #expect(configuration.credentials.map(\.label) == ["AAAAAAAAA1", "BBBBBBBBB2"])
        #expect(configuration.credentials.map(\.environment) == [.production, nil])
        #expect(configuration.credentials[1].topics == ["com.example.two"])
        #expect(configuration.credentials[1].relatedKeyID == "AAAAAAAAA1")
        // The run's environment first.
        #expect(configuration.endpoints.map(\.port) == [2002, 2001])
        #expect(configuration.endpointEnvironments == [.sandbox, .production])
        #expect(configuration.environment == .sandbox)
        #expect(configuration.environmentFallback)
        guard case .token(let first) = configuration.authentication else { Issue.record("token auth expected"); return }
        #expect(first.keyID.value == "AAAAAAAAA1", "the first key serves code that reads one")
    }

    @Test func oneKeyForEveryRowKeepsTodaysPath() throws {
        let keys = try Keys(["AAAAAAAAA1"])
        for (flags, host) in [([String](), "api.push.apple.com"), (["--endpoint", "sandbox"], "api.sandbox.push.apple.com")] {
            let configuration = try Self.setup(["--key-file", keys.path("AuthKey_AAAAAAAAA1.p8"), "--team-id", "TEAM123456"] + flags)
                .configuration
            #expect(configuration.credentials.isEmpty && configuration.endpointEnvironments.isEmpty)
            #expect(configuration.endpoints.map(\.host) == [host])
            #expect(configuration.environment == (flags.isEmpty ? .production : .sandbox), "--endpoint sandbox alone: a sandbox run")
        }
        // Without --endpoint, several keys may need both of Apple's environments.
        let two = try Keys(["AAAAAAAAA1", "BBBBBBBBB2"])
        let configuration = try Self.setup(["--key-file", two.path("AuthKey_AAAAAAAAA1.p8"),
                                            "--key-file", two.path("AuthKey_BBBBBBBBB2.p8"), "--team-id", "TEAM123456"])
            .configuration
        #expect(configuration.credentials.count == 2)
        #expect(configuration.endpoints.map(\.host) == ["api.push.apple.com", "api.sandbox.push.apple.com"])
        #expect(configuration.endpointEnvironments == [.production, .sandbox])
    }

    @Test func anEnvironmentWithNoEndpointStopsTheRunBeforeAnythingIsSent() throws {
        let keys = try Keys(["AAAAAAAAA1"])
        let job = try keys.write("job.toml", """
            [[keys]]
            file = "\(keys.path("AuthKey_AAAAAAAAA1.p8"))"
            team-id = "TEAM123456"
            environment = "sandbox"
            """)
        #expect(Self.message { _ = try Self.setup(["--config", job, "--endpoint", "127.0.0.1:2001"]) }
            .hasPrefix("no --endpoint serves sandbox, which key AAAAAAAAA1 (--config \(job): [[keys]] entry 1"))
        #expect(Self.message { _ = try Self.setup(["--config", job, "--endpoint", "sandbox=127.0.0.1:2001", "--environment", "production"]) }
            .hasPrefix("no --endpoint serves production, which --environment production needs"))
        #expect(Self.message { _ = try Self.setup(["--config", job, "--endpoint", "sandbox=127.0.0.1:2001", "--environment-fallback"]) }
            .hasPrefix("no --endpoint serves production, which --environment-fallback needs"))
        #expect(Self.message { _ = try Self.setup(["--config", job, "--endpoint", "staging=127.0.0.1:2001"]) }
            .hasPrefix("--endpoint staging=127.0.0.1:2001: \"staging\" is no environment"))
    }

    @Test func keysAndCertificatesDoNotMixAndSeveralCertificatesRefuseTheBinaryProtocol() throws {
        let keys = try Keys(["AAAAAAAAA1"])
        #expect(Self.message { _ = try Self.setup(["--key-file", keys.path("AuthKey_AAAAAAAAA1.p8"), "--team-id", "TEAM123456",
                                                   "--p12-file", "push.p12"]) }
            .contains("a run uses one"))
        #expect(Self.message { _ = try Self.setup(["--protocol", "binary", "--p12-file", "a.p12", "--p12-file", "b.p12"]) }
            .hasPrefix("--protocol binary takes one certificate"))
        #expect(Self.message { _ = try Self.setup(["--cert-file", "a.pem", "--cert-file", "b.pem", "--cert-key-file", "a.key"]) }
            .contains("2 --cert-file and 1 --cert-key-file, paired by position"))
    }

    @Test func theManyAppsJobFileListsItsKeysAsTheReadmeSays() throws {
        let path = SourceTree.root().appendingPathComponent("jobs/many-apps.example.toml").path
        let entries = try KeyList.entries(in: JobFile.load(path), source: "--config \(path)", defaultTeamID: nil)
        try KeyList.check(entries)
        #expect(entries.map(\.key) == [
            KeyDescription(file: "keys/AuthKey_ABCDE12345.p8", keyID: "ABCDE12345", teamID: "TEAM123456", environment: .production),
            KeyDescription(file: "keys/sandbox-push.p8", keyID: "FGHIJ67890", teamID: "TEAM123456", environment: .sandbox,
                           topics: ["com.example.one", "com.example.two"], relatedKeyID: "ABCDE12345"),
        ])
    }

    @Test func theBinaryProtocolsDefaultEndpointIsTheGatewayOfTheRunsEnvironment() throws {
        let keys = try Keys([])
        let authority = try CertificateAuthority()
        let identity = try authority.issueClientCertificate(commonName: "Apple Push Services: com.example.app",
                                                            userID: "com.example.app")
        try identity.writePEM(certificatePath: keys.path("push.pem"), privateKeyPath: keys.path("push.key"))
        let certificate = ["--protocol", "binary", "--cert-file", keys.path("push.pem"), "--cert-key-file", keys.path("push.key")]
        for (flags, host) in [([String](), "gateway.push.apple.com"), (["--environment", "sandbox"], "gateway.sandbox.push.apple.com")] {
            let configuration = try Self.setup(certificate + flags).configuration
            #expect(configuration.endpoints == [Endpoint(host: host, port: 2195)])
            #expect(configuration.credentials.isEmpty)
        }
    }
}
