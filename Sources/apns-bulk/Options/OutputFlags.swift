import ArgumentParser
import Foundation

/// Where a campaign of `send` or `broadcast` writes its files, whether it continues one there,
/// whether it only checks its rows, and its progress line: one declaration for both commands.
struct OutputFlags: ParsableArguments {
    @Option(help: "Output directory. Default: ./apns-bulk-out/<UTC-timestamp>/, or <UTC-timestamp>-2, -3, ... when a run started in the same second has that name.")
    var out: String?
    @Option(help: "Progress line on stderr: auto (when a TTY), always or never.")
    var progress: ProgressChoice = .auto
    @Flag(help: "Continue the campaign in --out after a crash or kill: skip the rows it has recorded, send the rest.")
    var resume = false
    @Flag(name: .customLong("dry-run"), help: "Read and check every row and the credentials as a run would, but connect to nothing and send nothing. Writes the rejected rows' records, and summary.json's would_send count, to --out; exits 0 unless the input or the credentials are unusable.")
    var dryRun = false

    enum ProgressChoice: String, ExpressibleByArgument {
        case auto, always, never

        /// Whether the progress line is drawn: `auto` when stderr is a terminal.
        var showsProgress: Bool {
            switch self {
            case .always: true
            case .never: false
            case .auto: isatty(2) == 1
            }
        }
    }
}
