import Foundation
import Testing

/// The built binary's `mock-server` with its retired binary gateway and feedback service on
/// loopback, requiring client certificates from a CA made at test time.
final class LegacyMockProcess {
    let process = Process()
    let caFile: String
    let recordFile: String
    let client: SendModesTests.ClientCertificate
    private(set) var binaryPort = 0
    private(set) var feedbackPort = 0
    private let stderrFile: String

    init(scratch: Scratch, unregisteredFile: String? = nil, extra: [String] = []) throws {
        client = try SendModesTests.ClientCertificate(scratch: scratch)
        caFile = scratch.path("legacy-mock-ca-\(UUID().uuidString.prefix(8)).pem")
        recordFile = scratch.path("legacy-record-\(UUID().uuidString.prefix(8)).jsonl")
        stderrFile = scratch.path("legacy-mock-stderr-\(UUID().uuidString.prefix(8)).log")
        process.executableURL = Binary.url
        process.arguments = ["mock-server", "--listen", "127.0.0.1:0", "--ca-out", caFile, "--client-ca", client.caFile,
                             "--legacy-binary-listen", "127.0.0.1:0", "--feedback-listen", "127.0.0.1:0",
                             "--binary-record-out", recordFile]
            + (unregisteredFile.map { ["--unregistered-file", $0] } ?? []) + extra
        let stdoutPipe = Pipe()
        process.standardOutput = stdoutPipe
        _ = FileManager.default.createFile(atPath: stderrFile, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: stderrFile)
        try process.run()
        let fd = stdoutPipe.fileHandleForReading.fileDescriptor
        var text = ""
        var chunk = [UInt8](repeating: 0, count: 512)
        while !text.contains("feedback listening") || !text.hasSuffix("\n") {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            text += String(decoding: chunk[0..<count], as: UTF8.self)
        }
        func port(_ prefix: String) -> Int {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }),
                  let colon = line.lastIndex(of: ":") else { return 0 }
            return Int(line[line.index(after: colon)...]) ?? 0
        }
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
    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    deinit { stop() }

    /// The gateway's record: one entry per frame received, in order (stop first).
    func record() throws -> [[String: Any]] {
        let text = try String(contentsOfFile: recordFile, encoding: .utf8)
        return try text.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
        }
    }
}
