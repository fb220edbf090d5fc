import Foundation
import Testing

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

    struct Result { var status: Int32; var stdout: String; var stderr: String }

    static func run(_ arguments: [String], environment: [String: String]? = nil) throws -> Result {
        try Command.run(url.path, arguments, environment: environment)
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
