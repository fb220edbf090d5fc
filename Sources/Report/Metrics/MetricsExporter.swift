import Pipeline
import Synchronization

/// The run's Prometheus metrics, from the `RunRecorder`'s totals: the textfile rewritten
/// atomically and a push to the Pushgateway every `intervalSeconds` during the run, and both once
/// more at the end with the exit status. A textfile that cannot be written is a warning (once),
/// never a reason to stop sending.
// Called on the writer thread during the run and on the calling thread at the end; `state` is behind its Mutex.
final class MetricsExporter: Sendable {
    private let options: MetricsOptions
    private let recorder: RunRecorder
    private let push: PushgatewayClient?
    private let warn: @Sendable (String) -> Void
    private let labels: [(String, String)]
    private let broadcast: Bool
    private let state = Mutex<(lastWrite: Double, textfileWarned: Bool)>((-1e18, false))

    /// `broadcast`: the run is a broadcast campaign (`CampaignConfiguration.broadcast`).
    init(options: MetricsOptions, recorder: RunRecorder, broadcast: Bool, warn: @escaping @Sendable (String) -> Void) {
        self.options = options
        self.broadcast = broadcast
        self.recorder = recorder
        self.warn = warn
        // In a textfile beside other shards' on one node, the shard tells their series apart; the
        // Pushgateway adds its grouping labels (job, instance, shard) itself.
        labels = options.shard.map { [("shard", $0)] } ?? []
        push = options.pushgateway.map { PushgatewayClient(target: $0, groupingPath: options.groupingPath, warn: warn) }
        recorder.onSecond { [weak self] second, totals in
            guard let self, totals.exitStatus == nil else { return }
            let due = state.withLock { state -> Bool in
                guard second.endedAtUnix - state.lastWrite >= self.options.intervalSeconds - 0.5 else { return false }
                state.lastWrite = second.endedAtUnix
                return true
            }
            if due { self.export(totals, final: false) }
        }
        // The series exist from the start (zeros, running 1), not from the first interval's end.
        export(recorder.totals, final: false)
    }

    /// The run is over (the recorder has its final totals): the last rewrite and push.
    func finish() {
        export(recorder.totals, final: true)
    }

    private func export(_ totals: RunRecorder.Totals, final: Bool) {
        let text = MetricsText.render(totals, labels: labels, broadcast: broadcast)
        if let path = options.textfilePath {
            do { try OutputFile.write(Array(text.utf8), to: path, atomically: true) } catch {
                let first = state.withLock { state -> Bool in
                    defer { state.textfileWarned = true }
                    return !state.textfileWarned
                }
                if first { warn("warning: cannot write --metrics-out \(path): \(error); the run goes on (shown once)") }
            }
        }
        if final { push?.finish(text) } else { push?.offer(text) }
    }
}
