import APNs
import Foundation
import Synchronization
import Transport

/// One campaign run: a reader thread, R reactor threads (workers) and a writer thread joined by
/// bounded queues, until every row has exactly one recorded outcome in the result files. The
/// calling thread watches the run (stop requests, unreachable endpoints) and gets the result.
///
/// Rows come from the CSV file at `configuration.inputPath` (``run()``, what `apns-bulk send`
/// does) or from memory (``run(rows:)``); either way the same checks reject bad rows with the same
/// reasons, and the result files are written to `configuration.outputDirectory`. Give
/// `onOutcome` to see each row's outcome as it is recorded, besides the files.
public final class Campaign: Sendable {
    /// Receives each row's final record, once per row, on the writer thread
    /// (see ``init(configuration:onOutcome:)``).
    public typealias OutcomeHandler = @Sendable (ResultRecord) -> Void

    /// The run's settings, fixed for the whole run.
    public let configuration: CampaignConfiguration
    /// The run's stop switch and run-level detectors; ``interrupt(signal:)`` goes through it.
    public let control: RunControl
    private let onOutcome: OutcomeHandler?
    /// The run's record as it goes: add a consumer with `recorder.onSecond` before the run to get
    /// each second's counts and latency histogram, and the totals (what `--metrics-out` writes).
    public let recorder: RunRecorder

    /// A campaign ready to run.
    /// - Parameters:
    ///   - configuration: the run's settings; for rows from memory its `inputPath` is not read.
    ///   - onOutcome: called with each row's record exactly once, in the order rows are
    ///     recorded (not row order), on the writer thread, after the record is written to the result
    ///     log. It holds up the writer while it runs, and with it the workers once the writer's
    ///     queue is full: keep it short (append to a buffer, bump a counter). A run's rows have
    ///     their records whether or not the result files could be written.
    public init(configuration: CampaignConfiguration, onOutcome: OutcomeHandler? = nil) {
        let configuration = Self.withFallbackCredential(configuration)
        self.configuration = configuration
        self.onOutcome = onOutcome
        control = RunControl(abortAfter: configuration.abortAfter)
        recorder = RunRecorder(workers: Self.reactorThreads(configuration) * CredentialGroup.count(for: configuration),
                               connections: configuration.connections,
                               control: control)
    }

    /// What the run amounted to.
    public struct Result: Sendable {
        /// What summary.json holds: counts by outcome and reason, latency, rates.
        public var summary: Summary
        /// Why the run stopped before every row was answered; nil when it ran to the end.
        public var stopCause: StopCause?
        /// `apns-bulk send`'s exit status for this run (0, 2 or 3; docs/resume-and-bad-nights.md, "Exit status").
        public var exitStatus: Int32
    }

    /// Errors found before anything was sent (exit 1).
    public enum SetupError: Error, CustomStringConvertible {
        case input(InputFileError)
        case noPayload(path: String)
        case output(path: String, detail: String)
        /// A broadcast's input (`configuration.broadcast`) without a `payload` column.
        case noBroadcastPayload(path: String)
        case campaignDirectory(CampaignDirectoryError)
        /// `configuration.resume` with rows from memory: a resume reads its input again, and
        /// rows from memory cannot be read again.
        case resumeNeedsFile
        /// `spreadSeconds` with no row count to spread: no prescan (a stream, `prescan` off) or
        /// rows from a sequence that is not a collection.
        case spreadNeedsRowCount
        /// `dryRun` with `resume`: a dry run sends nothing, so there is nothing to continue.
        case dryRunCannotResume
        /// A `--payload-template` placeholder names a column the input's header lacks.
        case templateColumn(column: String, header: [String], path: String, template: String?)
        /// Rows need `environment` (`rows` of them, counted by the prescan; nil: they may, without
        /// a prescan) and no endpoint serves it.
        case noEndpoint(environment: APNsEnvironment, rows: Int?)

        /// One line for stderr: what is wrong, and what to give instead.
        public var description: String {
            switch self {
            case .input(let error): error.description
            case .campaignDirectory(let error): error.description
            case .noBroadcastPayload(let path):
                "\(path) has no payload column: a broadcast's header is channel_id,payload[,priority,expiration,apns_request_id], "
                    + "each row's payload the JSON object of its Live Activity update"
            case .noPayload(let path):
                "\(path) has no payload column and no --payload-file was given: add a payload column (a JSON object per row) or give --payload-file P.json"
            case .output(let path, let detail):
                "cannot write to the output directory \(path): \(detail); give a writable --out DIR"
            case .templateColumn(let column, let header, let path, let template):
                "--payload-template" + (template.map { " \($0)" } ?? "") + ": placeholder {{\(column)}} names a column \(path) does not have; its header has "
                    + header.map { "\"\($0)\"" }.joined(separator: ", ") + ": add the column or change the placeholder"
            case .resumeNeedsFile:
                "resume needs the campaign's input file (it reads it again and skips the rows already recorded); "
                    + "rows from memory cannot be resumed: leave `resume` off, or give another output directory"
            case .spreadNeedsRowCount:
                "--spread picks the rate from the number of rows, and this input's rows are not counted before "
                    + "sending (a stream or --no-prescan): give --rate N instead, or a regular file with the prescan on"
            case .noEndpoint(let environment, let rows?):
                "\(rows) rows need the \(environment.rawValue) environment and no endpoint serves it: give --endpoint "
                    + "\(environment.rawValue)=HOST:PORT (or --endpoint \(environment.rawValue)), or change those rows' environment or key_id"
            case .noEndpoint(let environment, nil):
                "rows may need the \(environment.rawValue) environment and no endpoint serves it (the input is read once, "
                    + "without the prescan, so its rows cannot be checked first): give --endpoint \(environment.rawValue)=HOST:PORT, "
                    + "or a regular file with the prescan on"
            case .dryRunCannotResume:
                "--dry-run sends nothing, so there is no campaign to resume: leave --resume off (or --dry-run, to send)"
            }
        }
    }

    /// Asks the run to stop (e.g. on SIGINT/SIGTERM); safe from any thread.
    public func interrupt(signal: Int32) {
        control.stop(.interrupted(signal: signal))
    }

    /// Runs the campaign from the CSV file at `configuration.inputPath` to the end (what
    /// `apns-bulk send` does): prescan unless `configuration.prescan` is off, `resume` as
    /// configured. Throws only for problems found before anything is sent (``SetupError``).
    public func run() throws -> Result {
        let configuration = self.configuration
        let expectedRows: Int?
        var suspects: [UInt64]?
        var members: DoneRows?
        let source: CSVSource
        var columns = Self.groupColumns(configuration)
        let claim: CampaignDirectory.Claim
        if configuration.dryRun && configuration.resume { throw SetupError.dryRunCannotResume }
        if configuration.spreadSeconds != nil && !configuration.prescan { throw SetupError.spreadNeedsRowCount }
        do { claim = try CampaignDirectory.check(configuration) } catch { throw SetupError.campaignDirectory(error) }
        do {
            // A shard's resume needs to know its rows (what is left, what a crash may have sent),
            // so it prescans even with `prescan` off: its input is a regular file (`check` saw to it).
            // (Its duplicate check has no Bloom suspects: it keeps a hash per row of the shard.)
            if let shard = configuration.shard, configuration.prescan || claim.record != nil {
                let prescan = try ShardPrescan.run(path: configuration.inputPath, shard: shard,
                                                   requiresTopic: configuration.rowsNeedTopic)
                expectedRows = prescan.result.rows
                members = prescan.members
            } else if configuration.prescan {
                let scan = configuration.allowDuplicates ? nil
                    : DuplicateScanRequest(defaultTopic: configuration.defaults.topic, bloomBytes: configuration.duplicateFilterBytes)
                let prescan = try Prescan.run(path: configuration.inputPath, requiresTopic: configuration.rowsNeedTopic,
                                              duplicates: scan, groups: columns.prescanCount, names: configuration.columnNames)
                expectedRows = prescan.rows
                suspects = prescan.duplicateSuspects
            } else {
                expectedRows = nil
            }
            source = try CSVSource(path: configuration.inputPath, requiresTopic: configuration.rowsNeedTopic,
                                   extraColumns: columns.extras, names: configuration.columnNames,
                                   shouldStop: { [control] in control.isStopping })
        } catch {
            throw SetupError.input(error)
        }
        if !source.header.has(.payload) && configuration.defaultPayload == nil && configuration.payloadTemplate == nil {
            if configuration.broadcast != nil { throw SetupError.noBroadcastPayload(path: configuration.inputPath) }
            throw SetupError.noPayload(path: configuration.inputPath)
        }
        let template = try Self.bind(configuration.payloadTemplate, to: source.header, path: configuration.inputPath)
        try Self.prepareGroups(&columns, header: source.header, configuration: configuration)
        if configuration.dryRun {
            return try dryRun(source, expectedRows: expectedRows, claim: claim, duplicateSuspects: suspects, template: template,
                              columns: columns)
        }
        return try send(source, expectedRows: expectedRows, claim: claim, duplicateSuspects: suspects, template: template,
                        members: members, columns: columns)
    }

    /// The template's placeholders found in `header`, or the run stops before anything is sent.
    static func bind(_ template: PayloadTemplate?, to header: CSVHeader, path: String) throws -> BoundPayloadTemplate? {
        guard let template else { return nil }
        do { return try template.bind(to: header) } catch {
            throw SetupError.templateColumn(column: error.column, header: error.header, path: path, template: template.file)
        }
    }

    /// Sends `source`'s rows: the part of a run common to a file and rows from memory.
    /// `duplicateSuspects`: the prescan's (nil without one: the reader's stream mode).
    /// `members`: a sharded prescan's rows of this shard.
    func send<Source: RowSource>(_ source: Source, expectedRows: Int?, claim: CampaignDirectory.Claim,
                                 duplicateSuspects: [UInt64]? = nil, template: BoundPayloadTemplate? = nil,
                                 members: DoneRows? = nil, columns: GroupColumns? = nil) throws -> Result {
        var configuration = claim.configuration
        if configuration.spreadSeconds != nil && expectedRows == nil { throw SetupError.spreadNeedsRowCount }
        let directory: CampaignDirectory
        do { directory = try claim.take(expectedRows: expectedRows, members: members) } catch {
            throw SetupError.campaignDirectory(error)
        }
        if let finished = directory.finished { return Result(summary: finished, stopCause: nil, exitStatus: 0) }
        if let spread = configuration.spreadSeconds, let rows = expectedRows {
            configuration.rate = PacerDuration.rate(rows: rows - (directory.resumed?.done.count ?? 0), seconds: spread)
        }

        let shared = CampaignShared(configuration: configuration, control: control, template: template,
                                    sentRows: directory.sentRows)
        if let notice = directory.notice { shared.warn(notice) }
        let startedAt = ContinuousClock.now
        recorder.start(at: startedAt)
        let startedAtWall = Self.wallClockMilliseconds()
        let writer: ResultWriter
        do {
            writer = try ResultWriter(queue: shared.outcomes, outputDirectory: configuration.outputDirectory,
                                      expectedRows: expectedRows, control: control,
                                      showProgress: configuration.showProgress, startedAt: startedAt, directory: directory,
                                      onOutcome: onOutcome, pace: configuration.rate, recorder: recorder,
                                      labels: shared.labels, waiting: { [shared] in shared.waitingForConnection },
                                      proofs: shared.groups.map(\.environmentProof), kind: configuration.recordKind)
        } catch {
            throw SetupError.output(path: configuration.outputDirectory, detail: "\(error)")
        }
        let workers = try startWorkers(shared: shared, recorder: recorder, rows: columns?.rows)
        // Started once nothing more can throw (an exporter may start a thread that ends only in its
        // finish) and before the writer, so that their consumers miss no second.
        let run = CampaignExporter.Run(configuration: configuration, resumed: directory.resumed != nil, dryRun: false,
                                       recorder: recorder, control: control, warn: { [shared] in shared.warn($0) })
        let exports = configuration.exporters.compactMap { $0.start(run) }
        let writerDone = PipelineThread.start(name: "apns-bulk writer", batch: true) { writer.run() }
        let duplicates = configuration.allowDuplicates ? nil
            : DuplicateTokens(suspects: duplicateSuspects, defaultTopic: configuration.defaults.topic)
        let reader = Reader(source: ThreadBound(source), shared: shared, writer: writer, done: directory.resumed?.done,
                            sentRows: directory.sentRows, withheld: directory.withheld, duplicates: duplicates.map(ThreadBound.init),
                            columns: columns ?? Self.groupColumns(configuration))
        let readerDone = PipelineThread.start(name: "apns-bulk reader", batch: true) { reader.run() }

        watch(shared: shared, workers: workers, writerDone: writerDone)
        // Every row is recorded and the files are closed: the run's elapsed time ends here, not
        // after the goodbyes below (a fixed ~50 ms that would only blur short runs' rates).
        let finishedAt = ContinuousClock.now
        let finishedAtWall = Self.wallClockMilliseconds()

        for (_, handle) in workers {
            handle.reactor.execute { handle.worker.value.shutdown() }
        }
        // Each connection closes once its GOAWAY is written; what is left is aborted, and only
        // then is the reactor stopped, from its own thread, so that no connection is left holding
        // its worker (`endConnections`).
        shared.waitForConnectionsToClose(timeoutSeconds: 0.05)
        for (_, handle) in workers {
            handle.reactor.execute { handle.worker.value.endConnections() }
        }
        var stopped = Set<ObjectIdentifier>()
        for (_, handle) in workers where stopped.insert(ObjectIdentifier(handle.reactor)).inserted {
            let reactor = handle.reactor
            reactor.execute { reactor.stop() }
            reactor.join()
        }
        readerDone.wait()
        writerDone.wait()
        Self.warnUnproven(shared)

        var summary = writer.summary
        summary.inputStop = source.stoppedAt
        summary.rows = max(summary.rows, writer.rowsRead.load(ordering: .acquiring))
        summary.elapsedSeconds = ProgressLine.seconds(finishedAt - startedAt)
        summary.connections = max(configuration.connections, shared.plannedConnections.load(ordering: .relaxed))
        if summary.groups != nil { summary.groups?.noCredentials = shared.noCredentialCounts }
        summary.endpoints = configuration.endpoints.map(\.description)
        summary.unreachableEndpoints = shared.unreachableEndpoints(neverReady: true)
        summary.binaryProtocol = configuration.wireProtocol == .binary
        (summary.rate, summary.spreadSeconds) = (configuration.rate, configuration.spreadSeconds)
        summary.startedAtMilliseconds = startedAtWall
        summary.finishedAtMilliseconds = finishedAtWall
        summary.input = configuration.inputPath
        summary.fingerprint = directory.fingerprint
        summary.shard = configuration.shard
        let cause = control.stopCause
        summary.exitStatus = Self.exitStatus(cause: cause, summary: summary)
        let summaryPath = configuration.outputDirectory + "/summary.json"
        do { try OutputFile.write(Array(summary.json.utf8), to: summaryPath) } catch {
            control.stop(.outputFailed(detail: error.description))
        }
        recorder.finish(summary: summary, latency: writer.latencyBuckets, exitStatus: summary.exitStatus)
        for finish in exports {
            do { try finish(summary) } catch { shared.warn("warning: \(error)") }
        }
        return Result(summary: summary, stopCause: cause, exitStatus: summary.exitStatus)
    }

    /// Rows a group ended unproven (`EnvironmentProof`) without a WrongEnvironment stop, which
    /// says so itself (at the run's end, or under `--environment-fallback`), are named on stderr.
    private static func warnUnproven(_ shared: CampaignShared) {
        for group in shared.groups where group.environmentProof.endedUnproven > 0 {
            if case .wrongEnvironment? = group.control.stopCause { continue }
            let whose = group.label.map { "key \($0) in \(group.environment.rawValue)" } ?? "the run"
            let (answer, proof, things, list) = group.environmentProof.held == .channelNotRegistered
                ? ("ChannelNotRegistered", "delivered", "channels", BroadcastCampaign.deadChannelsFile)
                : ("BadDeviceToken", "delivered or Unregistered", "tokens", "dead-tokens.csv")
            shared.warn("warning: \(group.environmentProof.endedUnproven) rows were answered \(answer) and no row of "
                        + "\(whose) was \(proof), so nothing shows the \(things) belong to the "
                        + "\(group.environment.rawValue) environment (they look like another environment's): they end "
                        + "aborted WrongEnvironment, not in \(list). "
                        + "Check --environment and --endpoint, then run the same command with --resume.")
        }
    }

    /// UTC now, for summary.json's `started_at` and `finished_at`.
    private static func wallClockMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// docs/resume-and-bad-nights.md: 2 aborted (credentials, misconfiguration, signal, fatal); 3 some rows gave up;
    /// 0 otherwise.
    static func exitStatus(cause: StopCause?, summary: Summary) -> Int32 {
        if let cause, cause.outcomeForUnfinishedRows == .aborted { return 2 }
        if summary.counts[.aborted] > 0 { return 2 }
        // Reading stopped at a line it could not read: the shards whose log does not hold that row
        // (`--shard`) were cut short all the same.
        if summary.inputStop != nil { return 2 }
        if summary.counts[.gaveUp] > 0 { return 3 }
        return 0
    }

    private static func reactorThreads(_ configuration: CampaignConfiguration) -> Int {
        max(1, min(configuration.reactorThreads, configuration.connections))
    }

    private func startWorkers(shared: CampaignShared, recorder: RunRecorder, rows: [Int]?) throws -> [(group: Int, handle: WorkerHandle)] {
        let configuration = shared.configuration
        let threads = Self.reactorThreads(configuration)
        if shared.router != nil {
            var reactors: [Reactor] = []
            for index in 0..<threads { reactors.append(try Reactor.start(name: "apns-bulk reactor \(index)")) }
            return startGroupWorkers(shared: shared, recorder: recorder, rows: rows, threads: threads, reactors: reactors)
        }
        var handles: [WorkerHandle] = []
        for index in 0..<threads {
            let reactor = try Reactor.start(name: "apns-bulk reactor \(index)")
            let worker: any CampaignWorker = configuration.wireProtocol == .binary
                ? BinaryWorker(reactor: reactor, shared: shared, index: index)
                : Worker(reactor: reactor, shared: shared, index: index, recorder: recorder)
            handles.append(WorkerHandle(reactor: reactor, worker: ThreadBound(worker)))
        }
        let assignments = ConnectionPool.assignments(connections: configuration.connections,
                                                     endpoints: configuration.endpoints.count, threads: threads)
        for (handle, slots) in zip(handles, assignments) {
            let box = ThreadBound(slots)
            handle.reactor.execute { handle.worker.value.start(slots: box.value) }
        }
        return handles.map { (0, $0) }
    }

    /// The calling thread's watch: turns a stop request into a stop on every thread, and gives up
    /// on endpoints unreachable for `--unreachable-timeout`. Returns when every row is recorded.
    private func watch(shared: CampaignShared, workers: [(group: Int, handle: WorkerHandle)], writerDone: ThreadCompletion) {
        var stopHandled = false
        var groupsHandled = [Bool](repeating: shared.router == nil, count: shared.groups.count)
        var groupsDownSince = [ContinuousClock.Instant?](repeating: nil, count: shared.groups.count)
        var downSince: ContinuousClock.Instant?
        while !writerDone.isFinished {
            if control.isStopping && !stopHandled {
                stopHandled = true
                shared.stop.closeWork()
                if shared.router != nil { for group in shared.groups { group.closeWork() } }
                for (_, handle) in workers { handle.reactor.execute { handle.worker.value.beginStopping() } }
            }
            if shared.router != nil, !control.isStopping {
                Self.watchGroups(shared, workers: workers, handled: &groupsHandled, downSince: &groupsDownSince)
            }
            if !control.isStopping {
                if shared.readyConnectionCount > 0 {
                    downSince = nil
                } else if let since = downSince {
                    let seconds = ProgressLine.seconds(ContinuousClock.now - since)
                    if seconds >= configuration.unreachableTimeoutSeconds {
                        control.stop(shared.stopCauseWhenUnreachable(seconds: configuration.unreachableTimeoutSeconds))
                    }
                } else {
                    downSince = .now
                }
            }
            writerDone.wait(timeoutSeconds: 0.02)
        }
        if shared.router != nil, !control.isStopping { Self.announceUnhandledStops(shared, handled: groupsHandled) }
    }
}
