import Foundation
import Testing
import TestSupport

/// `apns-bulk channels` through the built binary against `mock-server` over TLS on 127.0.0.1:
/// what an operator sees on stdout, stderr and in the exit status.
@Suite struct ChannelsCommandTests {
    /// A mock-server that checks one key's tokens for `MockServerProcess.topic`, and the flags that reach it.
    struct Rig {
        let scratch: TemporaryDirectory
        let key: String
        let mock: MockServerProcess

        init(mockFlags: [String] = [], authentication: [String]? = nil) throws {
            scratch = try TemporaryDirectory()
            key = try scratch.signingKey("key.p8")
            mock = try MockServerProcess(scratch: scratch, keyFile: key, extra: mockFlags, authentication: authentication)
        }

        var token: [String] { ["--key-file", key, "--key-id", MockServerProcess.keyID, "--team-id", MockServerProcess.teamID] }

        /// `apns-bulk channels SUBCOMMAND --bundle-id B` to the mock with `credentials` (default: the token flags).
        func channels(_ subcommand: String, _ arguments: [String] = [], bundleID: String = MockServerProcess.topic,
                      credentials: [String]? = nil) throws -> Binary.Result {
            try Binary.run(["channels", subcommand, "--bundle-id", bundleID, "--endpoint", mock.endpoint,
                            "--ca-file", mock.caFile] + (credentials ?? token) + arguments)
        }
    }

    static func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

    /// One line on stderr, no crash.
    static func isOneLine(_ text: String) -> Bool {
        lines(text).count == 1 && !text.contains("Stack dump") && !text.contains("Fatal error")
    }

    @Test func createdChannelsAreListedShownAndUnknownOnceDeleted() throws {
        let rig = try Rig()
        defer { rig.mock.stop() }
        let created = try rig.channels("create", ["--count", "3"])
        #expect(created.status == 0 && created.stderr.isEmpty, "\(created.stderr)")
        let ids = Self.lines(created.stdout)
        #expect(ids.count == 3 && Set(ids).count == 3, "\(created.stdout)")

        let listed = try rig.channels("list")
        #expect(listed.status == 0 && Self.lines(listed.stdout) == ids, "the mock lists in creation order: \(listed.stdout)")

        let shown = try rig.channels("show", ["--channel-id", ids[0]])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(Self.lines(shown.stdout).count == 1)
        let settings = try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any]
        #expect(settings?["channel_id"] as? String == ids[0])
        #expect(settings?["message_storage_policy"] as? Int == 1, "most-recent is the default")
        #expect(settings?["push_type"] as? String == "LiveActivity")

        let deleted = try rig.channels("delete", ["--channel-id", ids[0]])
        #expect(deleted.status == 0 && Self.lines(deleted.stdout) == [ids[0]], "\(deleted.stderr)")
        let gone = try rig.channels("show", ["--channel-id", ids[0]])
        #expect(gone.status == 2 && gone.stdout.isEmpty)
        #expect(Self.isOneLine(gone.stderr) && gone.stderr.contains(ids[0]) && gone.stderr.contains("400 ChannelNotRegistered: "),
                "named with Apple's reason and its meaning: \(gone.stderr)")
        #expect(Self.lines(try rig.channels("list").stdout) == Array(ids.dropFirst()))
    }

    @Test func aNoStorageChannelShowsPolicyZero() throws {
        let rig = try Rig()
        defer { rig.mock.stop() }
        let created = try rig.channels("create", ["--storage-policy", "no-storage"])
        let id = try #require(Self.lines(created.stdout).first, "\(created.stderr)")
        let shown = try rig.channels("show", ["--channel-id", id])
        #expect(shown.stdout.contains(#""message_storage_policy":0"#), "\(shown.stdout) \(shown.stderr)")
    }

    @Test func deletingKnownAndUnknownChannelsDeletesTheKnownAndNamesTheUnknown() throws {
        let rig = try Rig()
        defer { rig.mock.stop() }
        let ids = Self.lines(try rig.channels("create", ["--count", "2"]).stdout)
        try #require(ids.count == 2)
        let unknown = "dW5rbm93bi1jaGFubmVs"
        // The unknown one first: it is answered before the others are sent.
        let deleted = try rig.channels("delete", ["--channel-id", unknown, "--channel-id", ids[0], "--channel-id", ids[1]])
        #expect(deleted.status == 2)
        #expect(Set(Self.lines(deleted.stdout)) == Set(ids), "each known one deleted and printed: \(deleted.stdout)")
        let complaints = Self.lines(deleted.stderr)
        #expect(complaints.count == 2, "\(deleted.stderr)")
        #expect(complaints.first?.hasPrefix("channel \(unknown): not deleted: APNs answered 400 ChannelNotRegistered: ") == true,
                "\(deleted.stderr)")
        #expect(complaints.last?.contains("2 of 3 channels deleted, 1 refused") == true, "\(deleted.stderr)")
        let listed = try rig.channels("list")
        #expect(listed.status == 0 && listed.stdout.isEmpty, "\(listed.stdout)")
    }

    @Test func createStopsAtTheChannelLimitWithTheIDsMadeBeforeItPrinted() throws {
        let rig = try Rig(mockFlags: ["--max-channels", "4"])
        defer { rig.mock.stop() }
        let first = try rig.channels("create")
        try #require(first.status == 0, "\(first.stderr)")
        let created = try rig.channels("create", ["--count", "6"])
        #expect(created.status == 2)
        let ids = Self.lines(created.stdout)
        #expect(ids.count == 3, "the 3 made before the refusal: \(created.stdout)")
        #expect(Self.isOneLine(created.stderr), "\(created.stderr)")
        #expect(created.stderr.contains("400 CannotCreateChannelConfig: ") && created.stderr.contains("3 of 6 channels created"),
                "\(created.stderr)")
        let listed = Self.lines(try rig.channels("list").stdout)
        #expect(listed == Self.lines(first.stdout) + ids, "every channel the mock holds was printed once: \(listed)")
    }

    @Test func aGoawayMidwayLosesNoChannelAndMakesNoneTwice() throws {
        let rig = try Rig(mockFlags: ["--goaway-after", "2"])
        defer { rig.mock.stop() }
        let created = try rig.channels("create", ["--count", "7"])
        #expect(created.status == 0, "\(created.stderr)")
        let ids = Self.lines(created.stdout)
        #expect(ids.count == 7 && Set(ids).count == 7, "\(created.stdout)")
        #expect(Set(Self.lines(try rig.channels("list").stdout)) == Set(ids))
    }

    @Test func aConnectionResetMidwayIsSurvivedAndTheResentCreatesAreSaid() throws {
        let rig = try Rig(mockFlags: ["--reset-after", "3"])
        defer { rig.mock.stop() }
        let created = try rig.channels("create", ["--count", "5"])
        #expect(created.status == 0, "\(created.stderr)")
        let ids = Self.lines(created.stdout)
        #expect(ids.count == 5 && Set(ids).count == 5, "\(created.stdout)")
        #expect(Self.isOneLine(created.stderr) && created.stderr.hasPrefix("warning: ")
                && created.stderr.contains("sent again") && created.stderr.contains("channels list"), "\(created.stderr)")
        #expect(Set(ids).isSubset(of: Set(Self.lines(try rig.channels("list").stdout))))
    }

    @Test func aListOfAThousandChannelsIsPrintedWhole() throws {
        let rig = try Rig()
        defer { rig.mock.stop() }
        let created = try rig.channels("create", ["--count", "1000"])
        #expect(created.status == 0, "\(created.stderr)")
        let listed = try rig.channels("list")
        #expect(listed.status == 0, "an answer of ~30 KB, past APNs' error bodies: \(listed.stderr)")
        #expect(Self.lines(listed.stdout).count == 1000 && Set(Self.lines(listed.stdout)) == Set(Self.lines(created.stdout)))
    }

    @Test func channelsGoThroughTheProxyGiven() throws {
        let rig = try Rig()
        defer { rig.mock.stop() }
        let proxy = try TinyproxyProcess(scratch: rig.scratch, connectPorts: [rig.mock.port])
        defer { proxy.stop() }
        let created = try rig.channels("create", ["--count", "2", "--proxy", proxy.url])
        #expect(created.status == 0 && Self.lines(created.stdout).count == 2, "\(created.stderr)")
        #expect(proxy.connectRequests.count == 1 && proxy.connectRequests[0].contains("CONNECT 127.0.0.1:\(rig.mock.port)"),
                "\(proxy.log)")
    }

    @Test func certificateAuthManagesChannelsToo() throws {
        let scratch = try TemporaryDirectory()
        let client = try SendModesTests.ClientCertificate(scratch: scratch)
        let rig = try Rig(authentication: ["--client-ca", client.caFile])
        defer { rig.mock.stop() }
        let certificate = ["--cert-file", client.certificate, "--cert-key-file", client.key]
        let created = try rig.channels("create", ["--count", "2"], credentials: certificate)
        #expect(created.status == 0, "\(created.stderr)")
        let ids = Self.lines(created.stdout)
        #expect(ids.count == 2)
        #expect(Self.lines(try rig.channels("list", credentials: certificate).stdout) == ids)
        let deleted = try rig.channels("delete", ["--channel-id", ids[1]], credentials: certificate)
        #expect(deleted.status == 0 && Self.lines(deleted.stdout) == [ids[1]], "\(deleted.stderr)")
        let token = try rig.channels("list")
        #expect(token.status == 2 && Self.isOneLine(token.stderr) && token.stderr.contains("refused the client certificate"),
                "a mock of certificates wants one: \(token.stderr)")
    }

    @Test func refusedCredentialsAreOneLineWithApplesReason() throws {
        let rig = try Rig()
        defer { rig.mock.stop() }
        let wrongKey = ["--key-file", rig.key, "--key-id", "OTHERKEY01", "--team-id", MockServerProcess.teamID]
        let refused = try rig.channels("create", ["--count", "3"], credentials: wrongKey)
        #expect(refused.status == 2 && refused.stdout.isEmpty)
        #expect(Self.isOneLine(refused.stderr) && refused.stderr.contains("APNs refused the credentials: 403 InvalidProviderToken: "),
                "\(refused.stderr)")
        let otherApp = try rig.channels("list", bundleID: "com.example.other")
        #expect(otherApp.status == 2 && Self.isOneLine(otherApp.stderr) && otherApp.stderr.contains("403 TopicMismatch: "),
                "\(otherApp.stderr)")
    }

    @Test func badFlagsAreOneLineNamingTheFlagAndNothingIsSent() throws {
        let scratch = try TemporaryDirectory()
        let key = try scratch.signingKey("key.p8")
        let token = ["--key-file", key, "--key-id", "KEYID12345", "--team-id", "TEAM123456", "--endpoint", "127.0.0.1:9"]
        let cases: [([String], String)] = [
            (["create", "--bundle-id", "com.example.app", "--count", "0"] + token, "--count 0"),
            (["create", "--bundle-id", "com.example.app", "--count", "10001"] + token, "--count 10001"),
            (["create", "--bundle-id", "com.example.app.push-type.liveactivity"] + token, "--bundle-id"),
            (["list", "--bundle-id", "com/example"] + token, "--bundle-id com/example"),
            (["show", "--bundle-id", "com.example.app", "--channel-id", "not base64!"] + token, "--channel-id not base64!"),
            (["delete", "--bundle-id", "com.example.app"] + token, "--channel-id"),
            (["list", "--bundle-id", "com.example.app", "--endpoint", "127.0.0.1:9"], "no credentials"),
            (["list", "--bundle-id", "com.example.app", "--key-file", scratch.path("missing.p8"), "--key-id", "KEYID12345",
              "--team-id", "TEAM123456"], "missing.p8"),
            (["list", "--bundle-id", "com.example.app", "--endpoint", "prod"] + token.dropLast(2), "--endpoint prod"),
            (["list", "--bundle-id", "com.example.app", "--environment", "production", "--endpoint", "sandbox"] + token.dropLast(2),
             "--environment production"),
            (["list", "--bundle-id", "com.example.app", "--ca-file", scratch.path("none.pem")] + token, "--ca-file"),
        ]
        for (arguments, named) in cases {
            let result = try Binary.run(["channels"] + arguments)
            #expect(result.status == 1 && result.stdout.isEmpty, "\(arguments): \(result.status) \(result.stderr)")
            #expect(Self.isOneLine(result.stderr) && result.stderr.contains(named), "\(arguments): \(result.stderr)")
        }
    }

    @Test func anUnreachableEndpointIsOneLineAndExitTwo() throws {
        let scratch = try TemporaryDirectory()
        let key = try scratch.signingKey("key.p8")
        let port = try LoopbackPort.free()
        let result = try Binary.run(["channels", "create", "--bundle-id", "com.example.app", "--count", "2",
                                     "--endpoint", "127.0.0.1:\(port)", "--key-file", key, "--key-id", "KEYID12345",
                                     "--team-id", "TEAM123456"])
        #expect(result.status == 2 && result.stdout.isEmpty)
        #expect(Self.isOneLine(result.stderr) && result.stderr.contains("cannot reach 127.0.0.1:\(port)")
                && result.stderr.contains("0 of 2 channels created"), "\(result.stderr)")
    }

    @Test func theEmbeddedMockStartsWithNoChannels() throws {
        let listed = try Binary.run(["channels", "list", "--bundle-id", "com.example.app", "--endpoint", "mock"])
        #expect(listed.status == 0 && listed.stdout.isEmpty && listed.stderr.isEmpty, "\(listed.stderr)")
        let created = try Binary.run(["channels", "create", "--bundle-id", "com.example.app", "--endpoint", "mock", "--count", "2"])
        #expect(created.status == 0 && Self.lines(created.stdout).count == 2, "\(created.stderr)")
    }
}
