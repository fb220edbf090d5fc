import APNs
import Transport

/// What a worker does differently when the run has several credential groups: its connections
/// open at its group's first row (a key with no rows opens none), a BadDeviceToken may move a row
/// to the other environment (`--environment-fallback`), and an UnrelatedKeyIdInToken is about the
/// connection, not the key: the row goes again on a fresh connection of its own key.
extension Worker {
    /// Opens the connections once the group has a row: at the next `put` into its queue, or when
    /// another group moves one here.
    func startAtFirstRow(slots assigned: [ConnectionSlot]) {
        waitingSlots = assigned
        let reactor = self.reactor
        group.addWaker { [weak self] in
            reactor.execute { [weak self] in
                guard let self else { return }
                openIfRowsWait()
                fillAll()
            }
        }
        group.work.callWhenAvailable { [weak self] in
            reactor.execute { [weak self] in self?.openIfRowsWait() }
        }
    }

    /// Opens the pool when the group has rows; else waits for the next.
    private func openIfRowsWait() {
        guard !poolStarted, !stopping else { return }
        if group.hasWaitingRows || !ready.isEmpty {
            poolStarted = true
            pool.start(slots: waitingSlots, delegate: self)
        } else if !group.work.isClosed {
            let reactor = self.reactor
            group.work.callWhenAvailable { [weak self] in
                reactor.execute { [weak self] in self?.openIfRowsWait() }
            }
        }
    }

    /// `--environment-fallback`: a row answered BadDeviceToken here goes once to the group that
    /// serves its topic in the other environment. False when none does: the row stays BadDeviceToken.
    func moveToOtherEnvironment(_ job: Job) -> Bool {
        guard let router = shared.router else { return false }
        let topic = job.headers?.values.topic ?? shared.configuration.defaults.topic
        guard case .group(let target) = router.route(environment: group.environment.other, topic: topic) else {
            return false
        }
        let moved = job.detached()
        moved.fallbackFrom = RowResult.code(of: group.environment)
        moved.group = target
        moved.lane = UInt16(target + 1)
        moved.avoidConnection = -1
        moved.sentToken = nil
        counters.retries += 1
        shared.groups[target].move(moved)
        return true
    }

    /// APNs answered UnrelatedKeyIdInToken: the connection is tied to another key (which this
    /// run never sends on it; a connection is one group's), so it is replaced and the row sent
    /// again at once without counting an attempt. A second such answer for the row is the key's
    /// own fault: false, and the caller stops the group as for any refused key.
    func resendOnFreshConnection(_ job: Job, _ connection: ClientConnection, answer: Response) -> Bool {
        guard !job.resentAfterUnrelatedKey else { return false }
        job.resentAfterUnrelatedKey = true
        job.attempts -= 1
        if !stopping { pool.replace(connection) }
        retry(job, afterMilliseconds: 0, lastAnswer: answer)
        return true
    }
}
