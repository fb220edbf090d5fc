import Foundation
import Testing
import TestSupport

/// The built binary's `mock-server` with its retired binary gateway and feedback service on
/// loopback, requiring client certificates from a CA made at test time.
final class LegacyMockProcess {
    let process: Process
    let caFile: String
    let recordFile: String
    let client: SendModesTests.ClientCertificate
    private(set) var binaryPort = 0
    private(set) var feedbackPort = 0
    private let stderrFile: String

    init(scratch: TemporaryDirectory, unregisteredFile: String? = nil, extra: [String] = []) throws {
        client = try SendModesTests.ClientCertificate(scratch: scratch)
        caFile = scratch.path("legacy-mock-ca-\(UUID().uuidString.prefix(8)).pem")
        recordFile = scratch.path("legacy-record-\(UUID().uuidString.prefix(8)).jsonl")
        stderrFile = scratch.path("legacy-mock-stderr-\(UUID().uuidString.prefix(8)).log")
        let stdoutPipe = Pipe()
        process = try Command.start(Binary.url.path, ["mock-server", "--listen", "127.0.0.1:0", "--ca-out", caFile,
                                                      "--client-ca", client.caFile, "--legacy-binary-listen", "127.0.0.1:0",
                                                      "--feedback-listen", "127.0.0.1:0", "--binary-record-out", recordFile]
            + (unregisteredFile.map { ["--unregistered-file", $0] } ?? []) + extra,
                                    standardOutput: stdoutPipe, standardError: Command.outputFile(stderrFile))
        let text = LoopbackPort.readAnnouncement(stdoutPipe) { $0.contains("feedback listening") && $0.hasSuffix("\n") }
        func port(_ prefix: String) -> Int { LoopbackPort.announced(prefix, in: text) ?? 0 }
        binaryPort = port("binary listening ")
        feedbackPort = port("feedback listening ")
        guard binaryPort > 0, feedbackPort > 0 else {
            stop()
            throw HarnessError.serverDidNotStart((try? String(contentsOfFile: stderrFile, encoding: .utf8)) ?? text)
        }
    }

    var binaryEndpoint: String { "127.0.0.1:\(binaryPort)" }
    var feedbackEndpoint: String { "127.0.0.1:\(feedbackPort)" }
    var certificateArguments: [String] {
        ["--cert-file", client.certificate, "--cert-key-file", client.key, "--ca-file", caFile]
    }

    /// SIGTERM (the record file is written then) and wait.
    func stop() { process.stop() }

    deinit { stop() }

    /// The gateway's record: one entry per frame received, in order (stop first).
    func record() throws -> [[String: Any]] {
        let text = try String(contentsOfFile: recordFile, encoding: .utf8)
        return try text.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
        }
    }
}
