#if canImport(Glibc)
import Glibc
#endif

/// The progress line on stderr: rows done, rate, outcome counts, ETA when the row count is known.
final class ProgressLine {
    private let expectedRows: Int?
    private let startedAt: ContinuousClock.Instant
    private var lastDrawn: ContinuousClock.Instant
    private let interactive = isatty(2) == 1
    /// `--rate` (or `--spread`'s rate): shown beside the rate reached, so a slow run reads as paced.
    private let pace: Double?
    /// While no connection is up: what the run waits for ("waiting for a connection (...)"), read
    /// once per line drawn; nil when it sends.
    private let waiting: (@Sendable () -> String?)?

    init(expectedRows: Int?, startedAt: ContinuousClock.Instant, pace: Double? = nil,
         waiting: (@Sendable () -> String?)? = nil) {
        self.expectedRows = expectedRows
        self.pace = pace
        self.waiting = waiting
        self.startedAt = startedAt
        lastDrawn = startedAt
    }

    func update(done: Int, counts: OutcomeCounts, now: ContinuousClock.Instant) {
        guard now - lastDrawn >= .seconds(1) else { return }
        lastDrawn = now
        draw(line(done: done, counts: counts, now: now, waiting: waiting?()), final: false)
    }

    func finish(done: Int, counts: OutcomeCounts) {
        draw(line(done: done, counts: counts, now: .now, waiting: nil), final: true)
    }

    private func line(done: Int, counts: OutcomeCounts, now: ContinuousClock.Instant, waiting: String?) -> String {
        let elapsed = Self.seconds(now - startedAt)
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        var text = expectedRows.map { "\(done)/\($0) rows" } ?? "\(done) rows"
        text += "  \(Int(rate))/s"
        if let pace { text += " (paced at \(PacerDuration.text(rate: pace))/s)" }
        let parts = Outcome.allCases.filter { counts[$0] > 0 }.map { "\($0.rawValue) \(counts[$0])" }
        if !parts.isEmpty { text += "  " + parts.joined(separator: " ") }
        if let waiting { return text + "  " + waiting }
        if let expected = expectedRows, rate > 0, done < expected {
            let remaining = Int(Double(expected - done) / rate)
            text += "  ETA \(remaining / 60)m\(remaining % 60 < 10 ? "0" : "")\(remaining % 60)s"
        }
        return text
    }

    private func draw(_ text: String, final: Bool) {
        let out = interactive ? "\r\u{1B}[K" + text + (final ? "\n" : "") : text + "\n"
        var bytes = Array(out.utf8)
        _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }

    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
