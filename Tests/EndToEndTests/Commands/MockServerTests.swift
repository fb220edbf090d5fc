import Foundation
import Testing
import TestSupport

/// `apns-bulk mock-server` kept running in the background: started, its `listening` line read,
/// stopped with SIGTERM.
final class RunningMockServer {
    let process: Process
    let port: Int
    private let stdout = Pipe()
    private let stderr = Pipe()

    init(_ arguments: [String]) throws {
        process = try Command.start(Binary.url.path, ["mock-server", "--listen", "127.0.0.1:0"] + arguments,
                                    standardOutput: stdout, standardError: stderr)
        let text = LoopbackPort.readAnnouncement(stdout) { $0.contains("\n") }
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("listening 127.0.0.1:"), let port = Int(text.dropFirst("listening 127.0.0.1:".count)) else {
            process.stop()
            let error = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw MockServerTestError.noListeningLine(stdout: text, stderr: error)
        }
        self.port = port
    }

    /// SIGTERM, then the exit status and stderr.
    @discardableResult
    func stop() -> (status: Int32, stderr: String) {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let error = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, error)
    }

    deinit { process.stop() }
}

enum MockServerTestError: Error { case noListeningLine(stdout: String, stderr: String) }

/// A temporary directory with a P-256 signing key (made by openssl), a provider token for it
/// (made by `apns-bulk token`) and a payload file.
final class MockServerFixture {
    let directory: TemporaryDirectory
    let keyID = "ABC1234567", teamID = "TEAM123456"
    let token: String
    let deviceToken = String(repeating: "ab", count: 32)

    init() throws {
        directory = try TemporaryDirectory()
        let key = try directory.signingKey("key.p8")
        let result = try Binary.run(["token", "--key-file", key, "--key-id", "ABC1234567", "--team-id", "TEAM123456"])
        token = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try directory.write("payload.json", #"{"aps":{"alert":"hi"}}"#)
    }

    func path(_ name: String) -> String { directory.path(name) }

    var verifyArguments: [String] {
        ["--verify-key-file", path("key.p8"), "--key-id", keyID, "--team-id", teamID, "--topic", "com.example.app",
         "--ca-out", path("ca.pem")]
    }

    /// Runs `nghttp` (the nghttp2 client) verbosely against the mock; returns its output.
    func nghttp(port: Int, deviceToken: String, authorized: Bool, extra: [String] = []) throws -> String {
        var arguments = ["-v", "--no-dep", "-d", path("payload.json"), "-H", "apns-topic: com.example.app",
                         "-H", "apns-push-type: alert"]
        if authorized { arguments += ["-H", "authorization: bearer \(token)"] }
        arguments += extra + ["https://127.0.0.1:\(port)/3/device/\(deviceToken)"]
        return try Command.tool("nghttp", arguments).stdout
    }
}

@Suite(.serialized) struct MockServerTests {
    @Test func h2loadGetsOnlySuccessesFromAnAuthorizedRun() throws {
        let fixture = try MockServerFixture()
        let server = try RunningMockServer(fixture.verifyArguments + ["--initial-max-streams", "50",
                                                                      "--stats-out", fixture.path("stats.json")])
        let result = try Command.tool("h2load", [
            "-n", "2000", "-c", "2", "-m", "50", "-t", "1", "-d", fixture.path("payload.json"),
            "-H", "authorization: bearer \(fixture.token)", "-H", "apns-topic: com.example.app",
            "-H", "apns-push-type: alert", "https://127.0.0.1:\(server.port)/3/device/\(fixture.deviceToken)",
        ])
        let stopped = server.stop()
        #expect(stopped.status == 0)
        #expect(result.stdout.contains("2000 succeeded"), "\(result.stdout)")
        #expect(result.stdout.contains("status codes: 2000 2xx, 0 3xx, 0 4xx, 0 5xx"), "\(result.stdout)")
        let stats = try String(contentsOfFile: fixture.path("stats.json"), encoding: .utf8)
        #expect(stats.contains(#""requests":2000"#))
        #expect(stats.contains(#""200":2000"#))
        #expect(stats.contains(#""connections":2"#))
    }

    @Test func nghttpGetsBadDeviceTokenAndMissingProviderToken() throws {
        let fixture = try MockServerFixture()
        let server = try RunningMockServer(fixture.verifyArguments)
        defer { server.stop() }
        let bad = try fixture.nghttp(port: server.port, deviceToken: "not-hex", authorized: true)
        #expect(bad.contains(":status: 400"))
        #expect(bad.contains(#"{"reason":"BadDeviceToken"}"#))
        #expect(bad.contains("apns-id: "))
        let missing = try fixture.nghttp(port: server.port, deviceToken: fixture.deviceToken, authorized: false)
        #expect(missing.contains(":status: 403"))
        #expect(missing.contains(#"{"reason":"MissingProviderToken"}"#))
    }

    @Test func aTokenConnectionStartsAtOneStreamAndOpensAfterItsFirstAuthorizedRequest() throws {
        let fixture = try MockServerFixture()
        let server = try RunningMockServer(fixture.verifyArguments + ["--max-streams", "321"])
        defer { server.stop() }
        let output = try fixture.nghttp(port: server.port, deviceToken: fixture.deviceToken, authorized: true)
        let settings = Self.receivedMaxConcurrentStreams(output)
        #expect(settings.count == 2, "\(output)")
        #expect(settings.first?.contains("):1]") == true)
        #expect(settings.last?.contains("):321]") == true)
        #expect(output.contains(":status: 200"))
        // A refused request does not open the connection.
        let refused = try fixture.nghttp(port: server.port, deviceToken: fixture.deviceToken, authorized: false)
        #expect(Self.receivedMaxConcurrentStreams(refused).count == 1)
    }

    /// The SETTINGS_MAX_CONCURRENT_STREAMS lines of the SETTINGS frames nghttp received.
    static func receivedMaxConcurrentStreams(_ output: String) -> [String] {
        var inReceivedSettings = false
        var found: [String] = []
        for line in output.components(separatedBy: "\n") {
            if line.hasPrefix("[") { inReceivedSettings = line.contains("recv SETTINGS frame") }
            if inReceivedSettings, line.contains("SETTINGS_MAX_CONCURRENT_STREAMS") { found.append(line) }
        }
        return found
    }

    @Test func sigtermWritesTheStatsAndTheRecord() throws {
        let fixture = try MockServerFixture()
        let server = try RunningMockServer(fixture.verifyArguments + [
            "--stats-out", fixture.path("stats.json"), "--record-out", fixture.path("record.jsonl.zst"),
        ])
        _ = try fixture.nghttp(port: server.port, deviceToken: fixture.deviceToken, authorized: true,
                               extra: ["-H", "apns-id: 123e4567-e89b-12d3-a456-426614174000"])
        _ = try fixture.nghttp(port: server.port, deviceToken: "zz", authorized: true)
        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let stats = try String(contentsOfFile: fixture.path("stats.json"), encoding: .utf8)
        #expect(stats.contains(#""requests":2"#))
        #expect(stats.contains(#""by_reason":{"BadDeviceToken":1}"#))
        let lines = try ZstdCLI.decode(fixture.path("record.jsonl.zst")).stdout
            .split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines.first?.contains(#""apns_id":"123e4567-e89b-12d3-a456-426614174000","status":200,"reason":null"#) == true)
        #expect(lines.last?.contains(#""device_token":"zz""#) == true)
        #expect(lines.last?.contains(#""status":400,"reason":"BadDeviceToken""#) == true)
    }

    @Test func badFlagValuesExitWithStatusOneAndAMessage() throws {
        let fixture = try MockServerFixture()
        let cases: [([String], String)] = [
            (["--fail", "404:0.5"], "--fail"),
            (["--unregistered-file", fixture.path("missing.csv")], "missing.csv"),
            (["--verify-key-file", fixture.path("key.p8")], "--key-id"),
            (["--listen", "nowhere"], "--listen"),
            (["--tls-cert", fixture.path("x.pem")], "--tls-key"),
        ]
        for (arguments, mention) in cases {
            let result = try Binary.run(["mock-server"] + arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.stderr.contains(mention), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("Stack dump"))
        }
    }
}
