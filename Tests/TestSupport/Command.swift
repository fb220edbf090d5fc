import Foundation

/// What a program that ran to its end printed, and how it ended.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdoutBytes: [UInt8]
    public var stderr: String

    public init(status: Int32, stdoutBytes: [UInt8], stderr: String) {
        self.status = status
        self.stdoutBytes = stdoutBytes
        self.stderr = stderr
    }

    /// A result for a run that printed text (or whose output a test does not read).
    public init(status: Int32, stdout: String = "", stderr: String = "") {
        self.init(status: status, stdoutBytes: Array(stdout.utf8), stderr: stderr)
    }

    public var stdout: String { String(decoding: stdoutBytes, as: UTF8.self) }
}

/// A program that ended with a status other than 0 where the test needed it to succeed.
public struct CommandFailed: Error, CustomStringConvertible {
    public let command: String
    public let result: CommandResult

    public var description: String { "\(command) exited \(result.status): \(result.stderr)" }
}

/// Starts programs for tests: the one way every test target runs a tool, the built binary or a server.
public enum Command {
    /// Runs `executable` to its end and collects what it printed on stdout and stderr.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                           standardInput: Any? = nil) throws -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let standardInput { process.standardInput = standardInput }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read stderr on another thread so that neither pipe can fill up and stall the child.
        let errData = HandedOverData()
        let errReader = Thread { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
        errReader.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CommandResult(status: process.terminationStatus, stdoutBytes: Array(outData),
                             stderr: String(decoding: errData.wait(), as: UTF8.self))
    }

    /// Runs a tool found on the PATH (`zstd`, `python3`, `openssl`, ...) to its end.
    public static func tool(_ name: String, _ arguments: [String], environment: [String: String]? = nil,
                            standardInput: Any? = nil) throws -> CommandResult {
        try run("/usr/bin/env", [name] + arguments, environment: environment, standardInput: standardInput)
    }

    /// Like `tool`, but throws `CommandFailed` unless the tool exits 0.
    @discardableResult
    public static func succeeding(_ name: String, _ arguments: [String], environment: [String: String]? = nil) throws -> CommandResult {
        let result = try tool(name, arguments, environment: environment)
        guard result.status == 0 else { throw CommandFailed(command: ([name] + arguments).joined(separator: " "), result: result) }
        return result
    }

    /// Starts `executable` in the background; stdout and stderr go where they are sent (the null
    /// device by default: nobody drains a pipe while a server runs). The caller stops it
    /// (`Process.stop()`), at the latest when the test ends.
    public static func start(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                             standardInput: Any? = nil, standardOutput: Any? = FileHandle.nullDevice,
                             standardError: Any? = FileHandle.nullDevice) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let standardInput { process.standardInput = standardInput }
        process.standardOutput = standardOutput
        process.standardError = standardError
        try process.run()
        return process
    }

    /// A file handle writing to a new empty file at `path`, for a background process's output that a
    /// failing test should show.
    public static func outputFile(_ path: String) -> FileHandle? {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        return FileHandle(forWritingAtPath: path)
    }
}

extension Process {
    /// Sends `signal` (SIGTERM unless said), then waits for the end; nothing when it has already ended.
    /// A program that does not handle SIGTERM itself needs SIGKILL: the test runner's threads block
    /// SIGTERM, and a child started from one inherits that.
    public func stop(signal: Int32 = SIGTERM) {
        if isRunning {
            kill(processIdentifier, signal)
            waitUntilExit()
        }
    }
}

/// Hands the stderr bytes from the reading thread to the waiting one.
/// Shared by two threads behind its condition lock.
final class HandedOverData: @unchecked Sendable {
    private let condition = NSCondition()
    private var data: Data?

    func set(_ value: Data) {
        condition.lock()
        data = value
        condition.signal()
        condition.unlock()
    }

    func wait() -> Data {
        condition.lock()
        defer { condition.unlock() }
        while data == nil { condition.wait() }
        return data ?? Data()
    }
}

/// The openssl command line tool: an implementation independent of ours, to make keys and
/// certificates at test time and to check what our code made.
public enum OpenSSL {
    /// Runs `openssl arguments`; returns its stdout, throws `CommandFailed` unless it exits 0.
    @discardableResult
    public static func run(_ arguments: [String]) throws -> String {
        try Command.succeeding("openssl", arguments).stdout
    }

    /// Runs `openssl arguments` for its verdict alone (`verify`, a refused option): its exit status.
    public static func status(_ arguments: [String]) throws -> Int32 {
        try Command.tool("openssl", arguments).status
    }
}
