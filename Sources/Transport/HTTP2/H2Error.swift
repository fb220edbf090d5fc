import CNGHTTP2

/// Why an HTTP/2 session call failed. The connection turns any of these into the loss of the
/// connection (every in-flight request comes back through `terminate()`), except `noFreeStreamSlot`
/// and `notAcceptingRequests`, which mean the caller submitted when it should not have.
public enum H2Error: Error, Equatable, Sendable, CustomStringConvertible {
    /// `submit` was called with `freeStreamSlots == 0`; wait for a slot (check after each receive).
    case noFreeStreamSlot
    /// The session received or sent GOAWAY, is shutting down, or was terminated: open a new connection.
    case notAcceptingRequests
    /// The session was terminated; it takes no more bytes.
    case terminated
    /// nghttp2 refused the call or found the peer's bytes unusable (code and nghttp2's text).
    case nghttp2(code: Int32, message: String)

    init(nghttp2Code code: Int) {
        let text = nghttp2_strerror(Int32(truncatingIfNeeded: code)).map { String(cString: $0) } ?? "unknown"
        self = .nghttp2(code: Int32(truncatingIfNeeded: code), message: text)
    }

    /// nghttp2's message and code, in one line.
    public var description: String {
        switch self {
        case .noFreeStreamSlot: "HTTP/2: no free stream slot (the server's MAX_CONCURRENT_STREAMS is reached)"
        case .notAcceptingRequests: "HTTP/2: the connection is closing (GOAWAY) and takes no new requests"
        case .terminated: "HTTP/2: the session was terminated"
        case .nghttp2(let code, let message): "HTTP/2 error \(code): \(message)"
        }
    }
}
