import APNs
import Transport

/// Requests that came back without an answer: refused unprocessed (sent again, no attempt
/// counted) or lost with their stream or connection (maybe processed: retried like a 500).
extension Worker {
    func connection(_ connection: ClientConnection, didNotProcess tag: UInt64, cause: H2NotProcessedCause) {
        guard let job = inFlight.remove(tag: tag) else { return }
        // Certainly not processed: send again without counting an attempt.
        job.attempts -= 1
        counters.notProcessed += 1
        if stopping {
            finish(stop.record(job))
        } else {
            ready.pushFront(job)
            scheduleRefill()
        }
        schedulePublish()
    }

    func connection(_ connection: ClientConnection, lost tag: UInt64, cause: H2LossCause) {
        guard let job = inFlight.remove(tag: tag) else { return }
        job.retriedAfterConnectionLoss = true
        if case .streamReset = cause { counters.streamResets += 1 } else { counters.lostWithConnection += 1 }
        if stopping {
            finish(stop.record(job))
            schedulePublish()
            return
        }
        let action = retryPolicy.decideAfterConnectionLoss(attempts: job.attempts,
                                                           expiration: expiration(of: job),
                                                           nowMilliseconds: WallClock.milliseconds())
        if case .finish(let outcome) = action {
            finish(job.record(outcome, reason: LocalReason.connectionLost.rawValue))
        } else {
            // Like a 500/503 retry: the connection that lost it is the last one to try again.
            if case .retry(_, elsewhere: true) = action, let slotIndex = pool.slotIndex(for: connection) {
                job.avoidConnection = pool.slots[slotIndex].id
            }
            counters.retries += 1
            ready.pushBack(job)
            scheduleRefill()
        }
        schedulePublish()
    }
}
