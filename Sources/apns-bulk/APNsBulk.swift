import APNs
import ArgumentParser
import Pipeline
#if canImport(Glibc)
import Glibc
#endif

/// The command line. Each subcommand lives in its own file; this file only lists them and turns
/// every error into one line on stderr and the exit status of docs/resume-and-bad-nights.md (never a stack trace).
@main
struct APNsBulk: ParsableCommand {
    /// Pipeline's, which summary.json records too: one constant for both.
    static let version = Version.current

    static let configuration = CommandConfiguration(
        commandName: "apns-bulk",
        abstract: "Send push-notification campaigns to APNs over HTTP/2, and account for every row.",
        version: version,
        subcommands: registeredSubcommands
    )

    static func main() {
        CryptoLibrary.keepStateUntilExit()
        do {
            let arguments = try JobFile.expand(SendCommand.attachingNegativeValues(Array(CommandLine.arguments.dropFirst())))
            var command = try parseAsRoot(arguments)
            try command.run()
        } catch let code as ExitCode {
            // A finished run's own status (2 aborted, 3 some gave up); its report is already out.
            Glibc.exit(code.rawValue)
        } catch let failure as RunFailure {
            writeStandardError("apns-bulk: \(failure.message)\n")
            Glibc.exit(failure.status)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                // --help, help NAME and --version: help texts end with the command's examples.
                print(HelpExamples.appended(to: fullMessage(for: error)))
                Glibc.exit(0)
            }
            // Usage and configuration errors: status 1, as docs/resume-and-bad-nights.md says, not ArgumentParser's 64.
            writeStandardError(fullMessage(for: error) + "\n")
            Glibc.exit(1)
        }
    }
}

/// An error a user can act on, with the exit status docs/resume-and-bad-nights.md assigns to it.
struct RunFailure: Error {
    var message: String
    var status: Int32

    static func usage(_ message: String) -> RunFailure { RunFailure(message: message, status: 1) }
}

func writeStandardError(_ text: String) { writeAll(text, to: 2) }

func writeStandardOutput(_ text: String) { writeAll(text, to: 1) }

/// Straight to the descriptor, unbuffered: nothing is left in a buffer by an exit that follows.
private func writeAll(_ text: String, to descriptor: Int32) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeMutableBytes { buffer in
            write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        }
        if written <= 0 { break }
        offset += written
    }
    bytes.removeAll()
}
