import Foundation
import Synchronization
import Transport

/// One run of `apns-bulk send`: prescan, then a reader thread, R reactor threads (workers) and a
/// writer thread joined by bounded queues, until every row of the input has exactly one recorded
/// outcome. The calling thread watches the run (stop requests, unreachable endpoints).
public final class Campaign: Sendable {
    public let configuration: CampaignConfiguration
    public let control: RunControl

    public init(configuration: CampaignConfiguration) {
        self.configuration = configuration
        control = RunControl(abortAfter: configuration.abortAfter)
    }

    /// What the run amounted to.
    public struct Result: Sendable {
        public var summary: Summary
        public var stopCause: StopCause?
        public var exitStatus: Int32
    }

    /// Errors found before anything was sent (exit 1).
    public enum SetupError: Error, CustomStringConvertible {
        case input(InputFileError)
        case noPayload(path: String)
        case output(path: String, detail: String)
        case campaignDirectory(CampaignDirectoryError)

        public var description: String {
            switch self {
            case .input(let error): error.description
            case .campaignDirectory(let error): error.description
            case .noPayload(let path):
                "\(path) has no payload column and no --payload-file was given: add a payload column (a JSON object per row) or give --payload-file P.json"
            case .output(let path, let detail):
                "cannot write to the output directory \(path): \(detail); give a writable --out DIR"
            }
        }
    }

    /// Asks the run to stop (e.g. on SIGINT/SIGTERM); safe from any thread.
    public func interrupt(signal: Int32) {
        control.stop(.interrupted(signal: signal))
    }

    /// Runs the campaign to the end. Throws only for problems found before anything is sent.
    public func run() throws -> Result {
        let configuration = self.configuration
        let expectedRows: Int?
        let source: CSVSource
        let claim: CampaignDirectory.Claim
        do { claim = try CampaignDirectory.check(configuration) } catch { throw SetupError.campaignDirectory(error) }
        do {
            if configuration.prescan {
                let prescan = try Prescan.run(path: configuration.inputPath, requiresTopic: configuration.rowsNeedTopic)
                expectedRows = prescan.rows
            } else {
                expectedRows = nil
            }
            source = try CSVSource(path: configuration.inputPath, requiresTopic: configuration.rowsNeedTopic,
                                   shouldStop: { [control] in control.isStopping })
        } catch {
            throw SetupError.input(error)
        }
        if !source.header.has(.payload) && configuration.defaultPayload == nil {
            throw SetupError.noPayload(path: configuration.inputPath)
        }
        let directory: CampaignDirectory
        do { directory = try claim.take(expectedRows: expectedRows) } catch { throw SetupError.campaignDirectory(error) }
        if let finished = directory.finished { return Result(summary: finished, stopCause: nil, exitStatus: 0) }

        let shared = CampaignShared(configuration: configuration, control: control)
        let startedAt = ContinuousClock.now
        let writer: ResultWriter
        do {
            writer = try ResultWriter(queue: shared.outcomes, outputDirectory: configuration.outputDirectory,
                                      expectedRows: expectedRows, control: control,
                                      showProgress: configuration.showProgress, startedAt: startedAt, directory: directory)
        } catch {
            throw SetupError.output(path: configuration.outputDirectory, detail: "\(error)")
        }
        let writerDone = PipelineThread.start(name: "apns-bulk writer") { writer.run() }
        let workers = try startWorkers(shared: shared)
        let reader = Reader(source: ThreadBound(source), shared: shared, writer: writer, done: directory.resumed?.done,
                            sentMark: directory.sentMark)
        let readerDone = PipelineThread.start(name: "apns-bulk reader") { reader.run() }

        watch(shared: shared, workers: workers, writerDone: writerDone)
        // Every row is recorded and the files are closed: the run's elapsed time ends here, not
        // after the goodbyes below (a fixed ~50 ms that would only blur short runs' rates).
        let finishedAt = ContinuousClock.now

        for handle in workers {
            handle.reactor.execute { handle.worker.value.shutdown() }
        }
        // A moment for the GOAWAY frames to leave; stopping a reactor aborts whatever is left.
        Thread.sleep(forTimeInterval: 0.05)
        for handle in workers {
            handle.reactor.stop()
            handle.reactor.join()
        }
        readerDone.wait()
        writerDone.wait()

        var summary = writer.summary
        summary.inputStop = source.stoppedAt
        summary.rows = max(summary.rows, writer.rowsRead.load(ordering: .acquiring))
        summary.elapsedSeconds = ProgressLine.seconds(finishedAt - startedAt)
        summary.connections = configuration.connections
        summary.endpoints = configuration.endpoints.map(\.description)
        let cause = control.stopCause
        summary.exitStatus = Self.exitStatus(cause: cause, summary: summary)
        let summaryPath = configuration.outputDirectory + "/summary.json"
        do { try OutputFile.write(Array(summary.json.utf8), to: summaryPath) } catch {
            control.stop(.outputFailed(detail: error.description))
        }
        return Result(summary: summary, stopCause: cause, exitStatus: summary.exitStatus)
    }

    /// DESIGN.md: 2 aborted (credentials, misconfiguration, signal, fatal); 3 some rows gave up;
    /// 0 otherwise.
    static func exitStatus(cause: StopCause?, summary: Summary) -> Int32 {
        if let cause, cause.outcomeForUnfinishedRows == .aborted { return 2 }
        if summary.counts[.aborted] > 0 { return 2 }
        if summary.counts[.gaveUp] > 0 { return 3 }
        return 0
    }

    private func startWorkers(shared: CampaignShared) throws -> [WorkerHandle] {
        let configuration = shared.configuration
        let threads = max(1, min(configuration.reactorThreads, configuration.connections))
        var handles: [WorkerHandle] = []
        for index in 0..<threads {
            let reactor = try Reactor.start(name: "apns-bulk reactor \(index)")
            handles.append(WorkerHandle(reactor: reactor, worker: ThreadBound(Worker(reactor: reactor, shared: shared, index: index))))
        }
        let assignments = ConnectionPool.assignments(connections: configuration.connections,
                                                     endpoints: configuration.endpoints.count, threads: threads)
        for (handle, slots) in zip(handles, assignments) {
            let box = ThreadBound(slots)
            handle.reactor.execute { handle.worker.value.start(slots: box.value) }
        }
        return handles
    }

    /// The calling thread's watch: turns a stop request into a stop on every thread, and gives up
    /// on endpoints unreachable for `--unreachable-timeout`. Returns when every row is recorded.
    private func watch(shared: CampaignShared, workers: [WorkerHandle], writerDone: ThreadCompletion) {
        var stopHandled = false
        var downSince: ContinuousClock.Instant?
        while !writerDone.isFinished {
            if control.isStopping && !stopHandled {
                stopHandled = true
                shared.stop.closeWork()
                for handle in workers { handle.reactor.execute { handle.worker.value.beginStopping() } }
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
    }
}
