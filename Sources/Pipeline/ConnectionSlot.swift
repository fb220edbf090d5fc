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
    var reconnects = ReconnectSchedule()
    var reconnectTimer: TimerID?

    init(id: Int, endpointIndex: Int, addressIndex: Int) {
        self.id = id
        self.endpointIndex = endpointIndex
        self.addressIndex = addressIndex
    }
}
