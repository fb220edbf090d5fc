import Transport

/// What the campaign asks of a reactor thread's worker, whichever wire it speaks: the HTTP/2
/// `Worker` or the binary provider API's `BinaryWorker`. Lifecycle calls only (through the
/// reactor's `execute`); the per-row path never goes through this protocol.
protocol CampaignWorker: AnyObject {
    /// Opens the assigned connections and starts pulling work.
    func start(slots: [ConnectionSlot])
    /// The run is stopping: send nothing new, end what waits as the stop says.
    func beginStopping()
    /// Every row is recorded: close the connections.
    func shutdown()
    /// The reactor stops next: end every connection still open or still to tell its worker that
    /// it closed, now. A connection keeps its worker until it has said so, and a stopped reactor
    /// never lets it: the two would keep each other, and the worker's pool, alive.
    func endConnections()
}

/// A worker and its reactor; the worker is touched only on that reactor's thread (via execute).
struct WorkerHandle: Sendable {
    let reactor: Reactor
    let worker: ThreadBound<any CampaignWorker>
}
