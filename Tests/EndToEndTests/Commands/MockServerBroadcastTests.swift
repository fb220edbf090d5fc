import Foundation
import Testing
import TestSupport

/// `apns-bulk mock-server` serving Live Activity broadcasts and channel management, driven by
/// Debian's `nghttp` (the nghttp2 client), an HTTP/2 client that is not ours: our client and our
/// mock cannot share one misreading of Apple's API here.
@Suite(.serialized) struct MockServerBroadcastTests {
    static let app = "com.example.app"

    /// The mock with channel management on a listener of its own; both ports read from its lines.
    final class Server {
        let process: Process
        let pushPort: Int
        let managementPort: Int
        private let stderrFile: String

        init(_ fixture: MockServerFixture, _ extra: [String]) throws {
            let stdout = Pipe()
            stderrFile = fixture.path("mock-stderr-\(UUID().uuidString.prefix(8)).log")
            process = try Command.start(Binary.url.path, ["mock-server", "--listen", "127.0.0.1:0",
                                                          "--management-listen", "127.0.0.1:0"] + fixture.verifyArguments + extra,
                                        standardOutput: stdout, standardError: Command.outputFile(stderrFile))
            let text = LoopbackPort.readAnnouncement(stdout) { $0.contains("management listening ") && $0.hasSuffix("\n") }
            guard let push = LoopbackPort.announced("listening ", in: text), let management = LoopbackPort.announced("management listening ", in: text) else {
                process.stop()
                throw HarnessError.serverDidNotStart((try? String(contentsOfFile: stderrFile, encoding: .utf8)) ?? text)
            }
            pushPort = push
            managementPort = management
        }

        /// SIGTERM; the exit status.
        func stop() -> Int32 {
            process.stop()
            return process.terminationStatus
        }

        deinit { process.stop() }
    }

    /// One nghttp exchange: the status, the headers received, the body.
    struct Exchange {
        var status = 0
        var headers: [String: String] = [:]
        var body = ""
    }

    /// Runs `nghttp -v` for one request and reads its answer from the frames it prints.
    static func nghttp(_ fixture: MockServerFixture, port: Int, path: String, method: String? = nil, body: String? = nil,
                       headers: [String] = []) throws -> Exchange {
        var arguments = ["-v", "--no-dep", "-H", "authorization: bearer \(fixture.token)"]
        for header in headers { arguments += ["-H", header] }
        if let method { arguments += ["-H", ":method: \(method)"] }
        if let body {
            let file = fixture.path("body-\(UUID().uuidString.prefix(8)).json")
            try body.write(toFile: file, atomically: true, encoding: .utf8)
            arguments += ["-d", file]
        }
        let output = try Command.tool("nghttp", arguments + ["https://127.0.0.1:\(port)\(path)"]).stdout
        return try Self.exchange(output)
    }

    /// The answer in `nghttp -v`'s output: header lines `[  0.004] recv (stream_id=1) name: value`
    /// (`(stream_id=1, sensitive)` for a field sent never indexed),
    /// and the body, printed as it arrives, before the next `[  time]` line (on the same line when it
    /// ends without a newline).
    static func exchange(_ output: String) throws -> Exchange {
        let header = try Regex(#"^\[ *[0-9.]+\] recv \(stream_id=[0-9]+(?:, sensitive)?\) (:?[a-z0-9-]+): (.*)$"#)
        let stamp = try Regex(#"\[ *[0-9.]+\] "#)
        var exchange = Exchange()
        for line in output.split(separator: "\n") {
            if let match = try header.wholeMatch(in: line) {
                let name = String(match.output[1].substring ?? ""), value = String(match.output[2].substring ?? "")
                if name == ":status" { exchange.status = Int(value) ?? 0 } else { exchange.headers[name] = value }
            } else if !line.hasPrefix(" "), !line.hasPrefix("The negotiated protocol") {
                exchange.body += line[..<(line.firstMatch(of: stamp)?.range.lowerBound ?? line.endIndex)]
            }
        }
        return exchange
    }

    @Test func nghttpCreatesShowsListsAndDeletesAChannelAndBroadcastsToIt() throws {
        let fixture = try MockServerFixture()
        let server = try Server(fixture, ["--record-out", fixture.path("record.jsonl.zst")])
        let channels = "/1/apps/\(Self.app)/channels"
        let created = try Self.nghttp(fixture, port: server.managementPort, path: channels,
                                      body: #"{"message-storage-policy": 1, "push-type": "LiveActivity"}"#)
        #expect(created.status == 201, "\(created)")
        let channel = try #require(created.headers["apns-channel-id"])
        #expect(Data(base64Encoded: channel) != nil, "\(channel) is base64")
        #expect(created.body.isEmpty)

        let shown = try Self.nghttp(fixture, port: server.managementPort, path: channels, headers: ["apns-channel-id: \(channel)"])
        #expect(shown.status == 200)
        let policy = try JSONSerialization.jsonObject(with: Data(shown.body.utf8)) as? [String: Any]
        #expect(policy?["message-storage-policy"] as? Int == 1)
        #expect(policy?["push-type"] as? String == "LiveActivity")

        let listed = try Self.nghttp(fixture, port: server.managementPort, path: "/1/apps/\(Self.app)/all-channels")
        #expect(listed.status == 200)
        let list = try JSONSerialization.jsonObject(with: Data(listed.body.utf8)) as? [String: Any]
        #expect(list?["channels"] as? [String] == [channel])

        let requestID = "0c7e3f1a-5b2d-4e8f-9a6b-1d2c3e4f5a6b"
        let update = #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"score":"2-1"}}}"#
        let broadcastHeaders = ["apns-channel-id: \(channel)", "apns-push-type: LiveActivity", "apns-expiration: 0",
                                "apns-priority: 10", "apns-request-id: \(requestID)"]
        let broadcast = try Self.nghttp(fixture, port: server.pushPort, path: "/4/broadcasts/apps/\(Self.app)",
                                        body: update, headers: broadcastHeaders)
        #expect(broadcast.status == 200, "\(broadcast)")
        #expect(broadcast.headers["apns-request-id"] == requestID)
        #expect(broadcast.headers["apns-unique-id"].map { UUID(uuidString: $0) != nil } == true)
        // Channel management is not served on the push listener, nor broadcasts on the management one.
        #expect(try Self.nghttp(fixture, port: server.pushPort, path: channels, headers: ["apns-channel-id: \(channel)"]).status == 404)
        #expect(try Self.nghttp(fixture, port: server.managementPort, path: "/4/broadcasts/apps/\(Self.app)", body: update,
                                headers: broadcastHeaders).status == 404)

        let deleted = try Self.nghttp(fixture, port: server.managementPort, path: channels, method: "DELETE",
                                      headers: ["apns-channel-id: \(channel)"])
        #expect(deleted.status == 204)
        let late = try Self.nghttp(fixture, port: server.pushPort, path: "/4/broadcasts/apps/\(Self.app)", body: update,
                                   headers: broadcastHeaders)
        #expect(late.status == 400)
        #expect(late.body == #"{"reason":"ChannelNotRegistered"}"#)
        #expect(server.stop() == 0)
        let kinds = try ZstdCLI.jsonLines(fixture.path("record.jsonl.zst")).map { "\($0["kind"] ?? "")/\($0["status"] ?? "")" }
        #expect(kinds == ["channel-create/201", "channel-read/200", "channel-list/200", "broadcast/200", "channel-read/404",
                          "broadcast/404", "channel-delete/204", "broadcast/400"])
    }

    @Test func maxChannelsLowersTheLimitOfEachApp() throws {
        let fixture = try MockServerFixture()
        let server = try Server(fixture, ["--max-channels", "2"])
        defer { _ = server.stop() }
        let statuses = try (0..<3).map { _ in
            try Self.nghttp(fixture, port: server.managementPort, path: "/1/apps/\(Self.app)/channels",
                            body: #"{"message-storage-policy": 0, "push-type": "LiveActivity"}"#)
        }
        #expect(statuses.map(\.status) == [201, 201, 400])
        #expect(statuses[2].body == #"{"reason":"CannotCreateChannelConfig"}"#)
        #expect(statuses[2].headers["apns-channel-id"] == nil)
    }

    @Test func badBroadcastFlagsExitWithStatusOneAndAMessage() throws {
        let fixture = try MockServerFixture()
        for (flags, named) in [(["--max-channels", "-1"], "--max-channels"), (["--management-listen", "nowhere"], "--management-listen")] {
            let result = try Binary.run(["mock-server", "--listen", "127.0.0.1:0"] + fixture.verifyArguments + flags)
            #expect(result.status == 1, "\(flags)")
            #expect(result.stderr.contains(named), "\(result.stderr)")
        }
    }
}
