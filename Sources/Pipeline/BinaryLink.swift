import Transport

/// One connection of a `--protocol binary` run (Apple's retired binary provider API): its slot
/// (endpoint, address, reconnect schedule), its TLS stream, and the notifications sent on it since
/// the last point known good, oldest first, each with the identifier that maps an error response
/// back to its row. The gateway answers only refusals, so a notification becomes known good when
/// one for a later identifier is refused (the gateway works in order), or when the quiet period
/// passed with no error response. Everything here runs on the worker's reactor thread.
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
    private var entries: [Sent] = []
    private var head = 0
    private var nextIdentifier: UInt32 = 1

    init(slot: ConnectionSlot) {
        self.slot = slot
    }

    /// Notifications on the wire, not yet known good.
    var unconfirmedCount: Int { entries.count - head }

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
    /// (nil when it is no longer here), and those after it. Empties the buffer.
    func split(at identifier: UInt32) -> (before: [Sent], failed: Sent?, after: [Sent]) {
        let all = Array(entries[head...])
        entries.removeAll()
        head = 0
        guard let index = all.firstIndex(where: { $0.identifier == identifier }) else { return ([], nil, all) }
        return (Array(all[..<index]), all[index], Array(all[(index + 1)...]))
    }

    /// Empties the buffer, returning what was in it, oldest first.
    func takeAll() -> [Sent] {
        let all = Array(entries[head...])
        entries.removeAll()
        head = 0
        return all
    }

    private func compact() {
        if head == entries.count {
            entries.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 4096, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }
}
