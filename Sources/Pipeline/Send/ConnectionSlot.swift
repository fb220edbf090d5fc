import Transport

/// One of the campaign's `--connections`: which endpoint and address it uses, and its
/// reconnect state. Kept by a `ConnectionPool`, on its reactor thread.
final class ConnectionSlot {
    let id: Int
    let endpointIndex: Int
    let addressIndex: Int
    @exclusivity(unchecked) var connection: ClientConnection?
    @exclusivity(unchecked) var endpointLabel: String?
    @exclusivity(unchecked) var isReady = false
    /// Requests this connection may have out until the run's settings are shown to be accepted:
    /// 1 on a new connection, doubled by each answer that proves a row's settings (DESIGN,
    /// "Stream slots"), so a wrong run-wide topic burns a handful of rows, not thousands.
    @exclusivity(unchecked) var window = 1
    var reconnects = ReconnectSchedule()
    var reconnectTimer: TimerID?

    init(id: Int, endpointIndex: Int, addressIndex: Int) {
        self.id = id
        self.endpointIndex = endpointIndex
        self.addressIndex = addressIndex
    }
}
