import Transport

/// One connection of a `--protocol binary` run (Apple's retired binary provider API): its slot
/// (endpoint, address, reconnect schedule), its TLS stream, and the notifications sent on it since
/// the last point known good, oldest first, each with the identifier that maps an error response
/// back to its row. The gateway answers only refusals, so a notification becomes known good when
/// one for a later identifier is refused (the gateway works in order), or when the quiet period
/// passed with no error response. How many may be at risk at once is its `BinaryWindow`, which
/// outlives each stream. Everything here runs on the worker's reactor thread.
final class BinaryLink {
    /// A notification on the wire, not yet known good.
    struct Sent {
        let identifier: UInt32
        let job: Job
        /// Monotonic nanoseconds when it was queued for the socket.
        let sentAt: UInt64
    }

    let slot: ConnectionSlot
    var stream: TLSStream?
    /// When the stream became ready (monotonic nanoseconds), for the reconnect schedule.
    var readyAt: UInt64?
    /// The gateway has shown it takes our notifications on this connection (one was known good):
    /// only then does the connection count as ready for the run. A refused client certificate
    /// shows only after the handshake (TLS 1.3), so the handshake alone proves nothing.
    var proven = false
    /// An error response arrived (the gateway closes after it): nothing more goes out here, and
    /// its end is not a silent close.
    var answeredWithError = false
    /// Bytes of an error response received so far (it may arrive split).
    var received: [UInt8] = []
    /// How many may be at risk: shrinks on refusals, grows while notifications go through.
    private(set) var window: BinaryWindow
    /// How long the gateway took to answer a refusal, smoothed as TCP smooths its round trip
    /// (nanoseconds); until the first refusal, the first TLS handshake's time (a round trip or
    /// two, so no shorter); nil before that.
    private(set) var answerNanoseconds: UInt64?
    /// Set while a check is due for notifications that went through (the window was full).
    var probeTimer: TimerID?
    private var entries: [Sent] = []
    private var head = 0
    /// Entries before this index went through (no error response came within a round of their
    /// sending), though their quiet period may not have passed: no refusal can discard them.
    private var through = 0
    private var nextIdentifier: UInt32 = 1

    init(slot: ConnectionSlot, windowLimit: Int) {
        self.slot = slot
        window = BinaryWindow(limit: windowLimit)
    }

    /// Notifications on the wire, not yet known good.
    var unconfirmedCount: Int { entries.count - head }

    /// Notifications sent so recently that an error response could still discard them.
    var atRiskCount: Int { entries.count - max(head, through) }

    /// Another notification may go out: the unconfirmed stay within `--binary-window`, and those
    /// at risk within the window the refusals left.
    var hasRoom: Bool { unconfirmedCount < window.limit && atRiskCount < window.size }

    /// Ready to take notifications.
    var canSend: Bool { stream?.isOpen == true && readyAt != nil && !answeredWithError }

    /// A fresh stream starts identifiers again (they only need to be unique per connection).
    func opened(_ stream: TLSStream, at now: UInt64) {
        self.stream = stream
        readyAt = now
        answeredWithError = false
        proven = false
        received.removeAll()
        nextIdentifier = 1
    }

    /// Records `job` as sent now and returns its identifier.
    func append(_ job: Job, at now: UInt64) -> UInt32 {
        let identifier = nextIdentifier
        nextIdentifier &+= 1
        if nextIdentifier == 0 { nextIdentifier = 1 }
        entries.append(Sent(identifier: identifier, job: job, sentAt: now))
        return identifier
    }

    /// The first handshake took `nanoseconds`: the answer time until a refusal is timed.
    func noteHandshake(_ nanoseconds: UInt64) {
        if answerNanoseconds == nil { answerNanoseconds = nanoseconds }
    }

    /// A refusal came back `sample` nanoseconds after its notification was sent.
    func noteAnswer(after sample: UInt64) {
        answerNanoseconds = answerNanoseconds.map { ($0 * 7 + sample) / 8 } ?? sample
    }

    /// How long a notification must go without an error response to count as gone through: four
    /// answer times (at least a millisecond), and never longer than `round`, which serves until
    /// a refusal has been timed.
    func horizon(round: UInt64) -> UInt64 {
        answerNanoseconds.map { min(round, max(1_000_000, $0 &* 4)) } ?? round
    }

    /// The notifications sent at or before `cutoff` with no error response went through: the
    /// window grows by their number.
    func advanceThrough(sentBefore cutoff: UInt64) {
        let start = max(head, through)
        var index = start
        while index < entries.count, entries[index].sentAt <= cutoff { index += 1 }
        through = index
        window.wentThrough(index - start)
    }

    /// The connection closed without an error response: what it took is in doubt, so the window
    /// shrinks as for a refusal.
    func closedSilently() {
        window.refused()
    }

    /// Removes and returns the notifications sent at or before `cutoff`: their quiet period passed.
    func takeQuiet(sentBefore cutoff: UInt64) -> [Sent] {
        var taken: [Sent] = []
        while head < entries.count, entries[head].sentAt <= cutoff {
            taken.append(entries[head])
            head += 1
        }
        compact()
        return taken
    }

    /// Splits everything unconfirmed at the notification `identifier` names: those before it, it
    /// (nil when it is no longer here), and those after it. Empties the buffer. Those before it
    /// went through, and a `refusal` then halves the window (a shutdown, status 10, is no sign of
    /// dead tokens).
    func split(at identifier: UInt32, refusal: Bool) -> (before: [Sent], failed: Sent?, after: [Sent]) {
        let alreadyThrough = max(head, through) - head
        let all = takeAll()
        let index = all.firstIndex { $0.identifier == identifier }
        // In the order they happened: those before it went through, then it was refused.
        if let index { window.wentThrough(index - alreadyThrough) }
        if refusal { window.refused() }
        guard let index else { return ([], nil, all) }
        return (Array(all[..<index]), all[index], Array(all[(index + 1)...]))
    }

    /// Empties the buffer, returning what was in it, oldest first.
    func takeAll() -> [Sent] {
        let all = Array(entries[head...])
        entries.removeAll()
        head = 0
        through = 0
        return all
    }

    private func compact() {
        if head == entries.count {
            entries.removeAll(keepingCapacity: true)
            head = 0
            through = 0
        } else if head > 4096, head * 2 > entries.count {
            entries.removeFirst(head)
            through = max(0, through - head)
            head = 0
        }
    }
}
