import Transport

/// A worker and its reactor; the worker is touched only on that reactor's thread (via execute).
struct WorkerHandle: Sendable {
    let reactor: Reactor
    let worker: ThreadBound<any CampaignWorker>
}
