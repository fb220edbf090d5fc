/// What a registered file descriptor wants to hear about.
public struct ReactorInterest: OptionSet, Sendable, Hashable {
    /// The bits: 1 readable, 2 writable.
    public let rawValue: UInt8
    /// The interest with these bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Data (or a hangup) can be read.
    public static let readable = ReactorInterest(rawValue: 1)
    /// The socket can take more output.
    public static let writable = ReactorInterest(rawValue: 2)
}

/// The owner of a file descriptor registered on a `Reactor`.
///
/// Every call arrives on the reactor's thread. The reactor keeps a strong reference to the handler
/// while the descriptor is registered (`deregister` drops it), so a connection lives at least as
/// long as its registration.
///
/// Readiness is level-triggered: a handler that stops reading before the socket is drained is
/// called again on the next loop turn, so a busy connection can yield to its neighbours without
/// losing data. The cost is that writable interest must be switched off whenever nothing is
/// pending (`Reactor.setInterest`), or `onWritable` fires on every turn.
public protocol ReactorHandler: AnyObject {
    /// Data (or end of file, or an error a read will report) is waiting.
    func onReadable()
    /// The socket accepts more output (or a non-blocking connect finished: check `Socket.pendingError`).
    func onWritable()
    /// EPOLLERR or EPOLLHUP, reported after `onReadable`/`onWritable` of the same event if the
    /// handler is still registered: the peer hung up or the socket failed. Close and deregister,
    /// or this keeps firing.
    func onHangup()
    /// The reactor is stopping: release what you own (deregister, close the fd, fail pending work).
    /// Called once per registered handler, on the reactor thread, before `run()` returns.
    func onReactorStop()
}
