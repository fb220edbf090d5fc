import Transport

/// One of the campaign's `--connections`: which endpoint and address it uses, and its
/// reconnect state. Kept by a `ConnectionPool`, on its reactor thread.
final class ConnectionSlot {
    let id: Int
    let endpointIndex: Int
    let addressIndex: Int
    var connection: ClientConnection?
    var endpointLabel: String?
    var isReady = false
    var reconnects = ReconnectSchedule()
    var reconnectTimer: TimerID?

    init(id: Int, endpointIndex: Int, addressIndex: Int) {
        self.id = id
        self.endpointIndex = endpointIndex
        self.addressIndex = addressIndex
    }
}
