import Foundation
import Testing
import TestSupport

/// Runs the built `apns-bulk` binary, as a user would.
enum Binary {
    static var url: URL {
        // The test bundle sits next to the products of the same build.
        var directory = Bundle.main.bundleURL
        for candidate in [directory] + (0..<3).map({ _ in directory.deleteLastPathComponent(); return directory }) {
            let binary = candidate.appendingPathComponent("apns-bulk")
            if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
        }
        return URL(fileURLWithPath: ".build/debug/apns-bulk")
    }

    typealias Result = CommandResult

    static func run(_ arguments: [String], environment: [String: String]? = nil) throws -> Result {
        try Command.run(url.path, arguments, environment: environment)
    }

    /// Starts the binary in the background, stdout to the null device and stderr to `stderrFile`
    /// (kept next to an output directory: a crash's backtrace is what a failing test should show) or
    /// the null device; the caller waits for it or kills it.
    static func start(_ arguments: [String], standardInput: Any? = nil, stderrFile: String? = nil) throws -> Process {
        try Command.start(url.path, arguments, standardInput: standardInput,
                          standardError: stderrFile.map { Command.outputFile($0) as Any } ?? FileHandle.nullDevice)
    }
}

@Suite struct CommandLineBasics {
    @Test func versionPrintsTheVersion() throws {
        let result = try Binary.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("0."))
    }

    @Test func unknownFlagIsAUsageErrorWithStatusOne() throws {
        let result = try Binary.run(["--no-such-flag"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("no-such-flag"))
        #expect(!result.stderr.contains("Stack dump"))
    }
}
