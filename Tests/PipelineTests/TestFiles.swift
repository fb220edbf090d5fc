import Foundation

/// A fresh temporary directory per test, removed when the value goes away.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("pipeio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        try Data(text.utf8).write(to: url.appendingPathComponent(name))
        return path(name)
    }

    @discardableResult
    func write(_ name: String, bytes: [UInt8]) throws -> String {
        try Data(bytes).write(to: url.appendingPathComponent(name))
        return path(name)
    }

    func read(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: url.appendingPathComponent(name))) }
}

struct ToolResult { var status: Int32; var stdout: [UInt8]; var stderr: String }

/// Runs an independent tool (the `zstd` CLI) to check our files the way a user's script would.
func runTool(_ arguments: [String]) throws -> ToolResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ToolResult(status: process.terminationStatus, stdout: Array(outData),
                      stderr: String(decoding: errData, as: UTF8.self))
}

/// Compresses `source` to `source.zst` with the zstd CLI.
@discardableResult
func zstdCompress(_ source: String) throws -> String {
    let result = try runTool(["zstd", "-q", "-f", source, "-o", source + ".zst"])
    precondition(result.status == 0, result.stderr)
    return source + ".zst"
}
