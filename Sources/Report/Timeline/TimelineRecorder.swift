import Pipeline
import Synchronization
import ZstdFile
#if canImport(Glibc)
import Glibc
#endif

/// Writes timeline.jsonl.zst as the run goes: a `RunRecorder` consumer that turns each second into
/// one line and writes it as its own zstd frame at once, so the sidecar is flushed as often as the
/// result log and a kill -9 loses at most the second in progress. Memory stays flat: nothing is
/// kept but the file. A resumed campaign keeps the sidecar's complete frames and appends; its
/// lines carry wall-clock times, so the runs line up. A sidecar that cannot be written is a
/// warning (once): the page then shows less, and the campaign goes on.
// Called on the writer thread during the run and on the calling thread at the end; `state` is behind its Mutex.
final class TimelineRecorder: Sendable {
    private struct State {
        var writer: ZstdFrameWriter?
        var warned = false
        var stopWritten = false
    }

    private let state: Mutex<State>
    private let path: String
    private let control: RunControl
    private let warn: @Sendable (String) -> Void

    /// Opens the sidecar in `directory` (appending when `resumed`), writes the run's `start` event
    /// and subscribes to `recorder`.
    init(directory: String, resumed: Bool, start: TimelineEvent, recorder: RunRecorder, control: RunControl,
         warn: @escaping @Sendable (String) -> Void) {
        path = directory + "/" + TimelineFile.name
        self.control = control
        self.warn = warn
        var writer: ZstdFrameWriter?
        var problem: String?
        do {
            if resumed, let kept = TimelineFile.read(path: path)?.completeBytes, truncate(path, off_t(kept)) != 0 {
                throw ZstdWriteError.write(path: path, errno: errno)
            }
            writer = try ZstdFrameWriter(path: path, level: 1, appending: resumed)
        } catch {
            problem = "\(error)"
        }
        state = Mutex(State(writer: writer, warned: false))
        if let problem { warnOnce(problem) }
        write([.event(start)])
        recorder.onSecond { [weak self] second, totals in self?.record(second, totals) }
    }

    private func record(_ second: RunRecorder.Second, _ totals: RunRecorder.Totals) {
        var lines: [TimelineLine] = [.second(TimelineSecond(second))]
        if (second.stopBegan || totals.exitStatus != nil) && totals.stopping, let cause = control.stopCause {
            let first = state.withLock { state in
                defer { state.stopWritten = true }
                return !state.stopWritten
            }
            if first {
                lines.append(.event(TimelineEvent(time: second.endedAtUnix, kind: "stop",
                                                  detail: cause.reasonForUnfinishedRows + ": " + cause.message)))
            }
        }
        if let exitStatus = totals.exitStatus {
            lines.append(.event(TimelineEvent(time: totals.finishedAtUnix ?? second.endedAtUnix, kind: "end",
                                              detail: String(exitStatus))))
        }
        write(lines, close: totals.exitStatus != nil)
    }

    private func write(_ lines: [TimelineLine], close: Bool = false) {
        let problem = state.withLock { state -> String? in
            guard let writer = state.writer else { return nil }
            do {
                for line in lines { writer.append(line.json) }
                try writer.flush()
                if close {
                    try writer.close()
                    state.writer = nil
                }
                return nil
            } catch {
                state.writer = nil
                return "\(error)"
            }
        }
        if let problem { warnOnce(problem) }
    }

    private func warnOnce(_ problem: String) {
        let first = state.withLock { state in
            defer { state.warned = true }
            return !state.warned
        }
        if first { warn("warning: cannot write \(path): \(problem); the run goes on, its report.html shows less (shown once)") }
    }
}
