import Transport

extension Worker {
    /// After a paced fill: permits left over go back to the pacer; when every permit was used and
    /// the connection could take more, one timer per worker wakes it when the next permit is due.
    /// A paced worker sleeps in the reactor's wait; it never polls.
    func paced(_ pacer: Pacer, unused: Int, on connection: ClientConnection) {
        let now = Reactor.monotonicNanoseconds()
        if unused > 0 {
            pacer.giveBack(unused, now: now)
            return
        }
        guard connection.freeStreamSlots > 0, !paceTimerSet, !stopping else { return }
        paceTimerSet = true
        reactor.schedule(after: .nanoseconds(Int64(pacer.wait(now: now)))) { [self] in
            paceTimerSet = false
            fillAll()
        }
    }
}
