/// Why a tunnel through the CONNECT proxy could not be opened. `proxy` is "host:port" (never
/// the credentials). Each is a configuration error while the proxy never let a connection
/// through: retrying would not fix a port, a password or the proxy's rules.
public enum ProxyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The TCP connect to the proxy failed (refused, unreachable, timed out).
    case cannotConnect(proxy: String, detail: String)
    /// The proxy's name has no address.
    case cannotResolve(proxy: String, detail: String)
    /// 407 (or 401, as tinyproxy answers) and no credentials were given.
    case wantsCredentials(proxy: String, statusLine: String)
    /// 407 or 401 to the credentials given for `username`.
    case refusedCredentials(proxy: String, username: String, statusLine: String)
    /// Any other status than 2xx, with its status line as the proxy sent it.
    case refused(proxy: String, target: String, statusLine: String)
    /// The answer was not HTTP (another service on that port, a TLS port).
    case notHTTP(proxy: String, answer: String)
    /// The proxy closed the connection before its answer was complete.
    case closedEarly(proxy: String)
    /// No complete answer within `timeout`.
    case timedOut(proxy: String, timeout: Duration)
    /// The answer's head was longer than any proxy's answer to CONNECT.
    case answerTooLong(proxy: String, limit: Int)
    /// A system call failed (out of descriptors, ...).
    case failed(proxy: String, detail: String)

    /// One line saying what failed and what to check.
    public var description: String {
        switch self {
        case let .cannotConnect(proxy, detail):
            return "cannot connect to the proxy \(proxy): \(detail) (check --proxy or HTTPS_PROXY)"
        case let .cannotResolve(proxy, detail):
            return "cannot resolve the proxy \(proxy): \(detail) (check --proxy or HTTPS_PROXY)"
        case let .wantsCredentials(proxy, statusLine):
            return "the proxy \(proxy) wants credentials (\"\(statusLine)\"): give them in the URL, "
                + "--proxy http://USER:PASSWORD@\(proxy)"
        case let .refusedCredentials(proxy, username, statusLine):
            return "the proxy \(proxy) refused the credentials given for user '\(username)' (\"\(statusLine)\"): "
                + "check the user name and password in --proxy or HTTPS_PROXY"
        case let .refused(proxy, target, statusLine):
            return "the proxy \(proxy) refused the tunnel to \(target): \"\(statusLine)\" (the proxy's rules must "
                + "allow CONNECT to that host and port)"
        case let .notHTTP(proxy, answer):
            return "the proxy \(proxy) did not answer in HTTP: it sent \(answer) (is it an HTTP proxy, and is the port right?)"
        case let .closedEarly(proxy):
            return "the proxy \(proxy) closed the connection before answering CONNECT"
        case let .timedOut(proxy, timeout):
            return "the proxy \(proxy) did not answer CONNECT within \(SocketError.milliseconds(timeout)) ms"
        case let .answerTooLong(proxy, limit):
            return "the proxy \(proxy) answered CONNECT with a head of more than \(limit) bytes; not an HTTP proxy?"
        case let .failed(proxy, detail):
            return "the tunnel through the proxy \(proxy) failed: \(detail)"
        }
    }
}
