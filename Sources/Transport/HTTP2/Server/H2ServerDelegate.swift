/// The application side of an `H2Server`, living on the server's reactor thread.
///
/// The server creates the delegate on its reactor thread (`H2Server.start`'s factory), asks it for
/// one `H2ServerConnectionHandler` per connection once TLS is up, and tells it when the server
/// stops. Nothing here is Sendable: every call arrives on the reactor thread.
public protocol H2ServerDelegate: AnyObject, SendableMetatype {
    /// A client finished its TLS handshake; return what answers its requests.
    func connectionOpened(_ connection: H2ServerConnection) -> any H2ServerConnectionHandler
    /// The server is listening; `timers` runs work on its reactor thread (periodic flushes, ...).
    func serverStarted(_ timers: H2ServerTimers)
    /// The server is stopping: every connection is about to receive GOAWAY and close.
    func serverStopping()
}

extension H2ServerDelegate {
    /// Nothing to do by default.
    public func serverStarted(_ timers: H2ServerTimers) {}
    /// Nothing to do by default.
    public func serverStopping() {}
}

/// Timers on an `H2Server`'s reactor, for its delegate. Reactor thread only.
public struct H2ServerTimers {
    let reactor: Reactor

    /// Runs `action` on the reactor thread after `delay`; dropped when the server stops.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping () -> Void) -> TimerID {
        reactor.schedule(after: delay, action)
    }
}

/// Answers the requests of one connection, now or later (`H2ServerConnection.schedule`).
/// Every call arrives on the reactor thread.
public protocol H2ServerConnectionHandler: AnyObject {
    /// A client opens a stream, before its headers are read: false refuses it at once with
    /// RST_STREAM(REFUSED_STREAM) (the client may send it again).
    func admitsStream(_ streamID: Int32, on connection: H2ServerConnection) -> Bool
    /// A complete request; answer it with `connection.respond`, at once or from a timer.
    func received(_ request: H2ServerRequest, on connection: H2ServerConnection)
    /// The client reset a stream (or it closed) before it was answered.
    func streamClosed(_ streamID: Int32, errorCode: UInt32, on connection: H2ServerConnection)
    /// The connection is gone (closed by either side, reset, or the server stopped).
    func connectionClosed(_ connection: H2ServerConnection)
}

extension H2ServerConnectionHandler {
    /// Admits every stream by default.
    public func admitsStream(_ streamID: Int32, on connection: H2ServerConnection) -> Bool { true }
    /// Nothing to do by default.
    public func streamClosed(_ streamID: Int32, errorCode: UInt32, on connection: H2ServerConnection) {}
    /// Nothing to do by default.
    public func connectionClosed(_ connection: H2ServerConnection) {}
}
