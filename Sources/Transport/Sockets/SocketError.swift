import Glibc

/// A failure below TLS: a system call, a connect, a name resolution.
public enum SocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A system call failed where nothing the user gave is to blame (out of descriptors, ...).
    case system(call: String, errno: Int32)
    /// The TCP connect to `address` failed (refused, unreachable, reset).
    case connectFailed(address: String, errno: Int32)
    /// The TCP connect to `address` did not finish within `timeout`.
    case connectTimedOut(address: String, timeout: Duration)
    /// Listening on `address` failed (in use, not a local address, ...).
    case listenFailed(address: String, errno: Int32)
    /// `host` could not be resolved to any address (DNS may answer later: a timeout, a
    /// resolver down).
    case resolutionFailed(host: String, reason: String)
    /// DNS answered that `host` does not exist or has no address: asking again will not help.
    case nameNotFound(host: String, reason: String)
    /// The reactor stopped before the operation finished.
    case reactorStopped

    /// One line naming the call and the system's message.
    public var description: String {
        switch self {
        case let .system(call, code):
            return "\(call) failed: \(SocketError.text(code))"
        case let .connectFailed(address, code):
            return "could not connect to \(address): \(SocketError.text(code))"
        case let .connectTimedOut(address, timeout):
            return "could not connect to \(address): no answer within \(SocketError.milliseconds(timeout)) ms"
                + " (is the host reachable, and is a firewall dropping the connection?)"
        case let .listenFailed(address, code):
            var text = "could not listen on \(address): \(SocketError.text(code))"
            if code == EADDRINUSE { text += " (another process holds the port: choose another, or port 0 for any)" }
            return text
        case let .resolutionFailed(host, reason):
            return "could not resolve \(host): \(reason) (check the host name and the DNS setup)"
        case let .nameNotFound(host, reason):
            return "cannot resolve \(host): \(reason) (check the host name)"
        case .reactorStopped:
            return "the transport stopped before the operation finished"
        }
    }

    static func text(_ code: Int32) -> String {
        guard let message = strerror(code) else { return "errno \(code)" }
        return String(cString: message)
    }

    static func milliseconds(_ duration: Duration) -> UInt64 {
        Reactor.nanoseconds(duration) / 1_000_000
    }
}
