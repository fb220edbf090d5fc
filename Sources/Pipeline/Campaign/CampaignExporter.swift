/// Something outside the engine that follows each run of a campaign and writes what it makes of the
/// run's aggregates: the Report module's timeline sidecar, Prometheus metrics and report.html
/// (`CampaignExporter.standard`, what `apns-bulk send` attaches), or a program's own. Give it in
/// ``CampaignConfiguration/exporters``; a campaign without exporters writes only its result files.
///
/// A run calls ``start`` on its calling thread once nothing more can keep it from sending, before
/// its writer thread starts: a consumer added there with ``RunRecorder/onSecond(_:)`` gets every
/// second, and the last call with the exit status. The ``Finish`` it returns is called on the same
/// thread once every row is recorded, summary.json is written and the recorder's last call is
/// made, before `run()` returns. A dry run (``Run/dryRun``) calls both too, but its recorder counts
/// nothing: only its end is worth following.
public struct CampaignExporter: Sendable {
    /// What an exporter learns of a run as it starts.
    public struct Run: Sendable {
        /// The run's settings as it runs them (`rate` already picked for `spreadSeconds`).
        public let configuration: CampaignConfiguration
        /// The output directory holds an earlier run of this campaign, which this one continues.
        public let resumed: Bool
        /// A dry run (`configuration.dryRun` with ``Campaign/run()``): nothing is sent, and the
        /// recorder counts nothing.
        public let dryRun: Bool
        /// The run's counts once a second: subscribe with ``RunRecorder/onSecond(_:)``.
        public let recorder: RunRecorder
        /// The run's stop switch; its `stopCause` says why a stopping run stops.
        public let control: RunControl
        /// Puts a warning line on stderr without breaking the progress line.
        public let warn: @Sendable (String) -> Void
    }

    /// A file an exporter writes at a run's end that could not be written: a warning after a run
    /// (its records are written), the dry run's ``Campaign/SetupError/output(path:detail:)``.
    public struct WriteFailure: Error, CustomStringConvertible {
        /// The file that could not be written.
        public let path: String
        public let cause: OutputFileError

        public init(path: String, cause: OutputFileError) {
            self.path = path
            self.cause = cause
        }

        public var description: String { "cannot write \(path): \(cause)" }
    }

    /// Told of the run's end, with its summary as summary.json holds it.
    public typealias Finish = @Sendable (Summary) throws(WriteFailure) -> Void

    /// Starts following `run`; returns what is told of its end, or nil when there is nothing to follow.
    public let start: @Sendable (Run) -> Finish?

    public init(start: @escaping @Sendable (Run) -> Finish?) {
        self.start = start
    }
}
