/// How many notifications a binary connection may have at risk: sent so recently that an error
/// response could still discard them. The gateway discards everything sent after a refused
/// notification, so a full `--binary-window` in flight around each dead token resends the whole
/// window again and again (issue 29: 243,486 frames for 5,000 rows with 123 bad tokens). Like
/// TCP's congestion window, it starts small, halves on each refusal, and grows by one for each
/// notification that goes through (so it doubles per round while nothing is refused), never
/// beyond the configured window.
struct BinaryWindow: Equatable {
    /// A new connection's first flight, like TCP's initial window: a dead token early in the
    /// campaign discards at most this many.
    static let initialSize = 100

    /// `--binary-window`: the most ever at risk (and the most unconfirmed, see `BinaryLink`).
    let limit: Int
    private(set) var size: Int

    init(limit: Int) {
        self.limit = max(1, limit)
        size = min(self.limit, Self.initialSize)
    }

    /// `count` notifications went through (a later one was refused, or no error response came
    /// for a round).
    mutating func wentThrough(_ count: Int) {
        guard count > 0 else { return }
        size = min(limit, size + count)
    }

    /// The gateway refused a notification (or closed without a word) and discarded what followed.
    mutating func refused() {
        size = max(1, size / 2)
    }
}
