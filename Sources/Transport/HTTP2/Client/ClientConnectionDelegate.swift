/// Where a `ClientConnection` is in its life.
public enum ClientConnectionState: Sendable, Equatable {
    /// TCP connect, TLS handshake, or waiting for the server's first SETTINGS.
    case connecting
    /// Takes requests (as many as `freeStreamSlots`).
    case ready
    /// GOAWAY received or `close()` called: in-flight requests finish, nothing new is taken.
    case draining
    /// Over; `didCloseWith` was (or is about to be) delivered.
    case closed
}

/// What a `ClientConnection` tells its owner, always on the connection's reactor thread.
///
/// Every submitted tag comes back exactly once, through `didReceive`, `didNotProcess` or `lost`,
/// and `didCloseWith` is the last call a connection ever makes. No method is called from inside
/// `submit`, `flush` or `close`; `abort` delivers what remains before it returns (unless it is
/// called from inside one of these methods: then right after that method returns).
public protocol ClientConnectionDelegate: AnyObject {
    /// The server's SETTINGS arrived: submit up to `freeStreamSlots` requests now.
    func connectionDidBecomeReady(_ connection: ClientConnection)
    /// Stream slots opened (server SETTINGS raised, responses freed streams): submit more now.
    /// Called once after a batch of events, only while `freeStreamSlots > 0`.
    func connectionHasFreeSlots(_ connection: ClientConnection)
    func connection(_ connection: ClientConnection, didReceive response: H2Response)
    /// Certainly not processed (REFUSED_STREAM, above GOAWAY's last-stream-id, never sent): resend,
    /// no attempt counted.
    func connection(_ connection: ClientConnection, didNotProcess tag: UInt64, cause: H2NotProcessedCause)
    /// May or may not have been processed (stream reset, connection died with it in flight).
    func connection(_ connection: ClientConnection, lost tag: UInt64, cause: H2LossCause)
    /// GOAWAY received (debug data is APNs' JSON {"reason":...}); the connection drains and closes.
    /// Requests above its last-stream-id follow as `didNotProcess(.aboveGoawayLastStream)`.
    func connection(_ connection: ClientConnection, didReceiveGoaway goaway: H2GoAway)
    /// Closed. Every submitted tag was handed back (response / didNotProcess / lost) before this.
    /// `error` is nil when closed by close()/abort() or after a GOAWAY drained cleanly.
    func connection(_ connection: ClientConnection, didCloseWith error: ClientConnectionError?)
}

/// Why a connection ended badly. `peer` reads "api.push.apple.com:443 (17.188.1.2:443)".
public enum ClientConnectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The TCP connect failed or timed out.
    case connect(SocketError)
    /// The CONNECT proxy could not be reached or refused the tunnel.
    case proxy(ProxyError)
    /// The TLS handshake failed, or a TLS read/write on the established connection (a reset).
    case tls(TLSError)
    /// The server broke HTTP/2 (nghttp2 refused its bytes, or ended the session with a GOAWAY of its own).
    case protocolError(H2Error)
    /// The server closed the connection without GOAWAY, or with requests still unanswered.
    case peerClosed(peer: String)
    /// A PING sent after `pingInterval` of silence was not acknowledged within `timeout`.
    case pingTimeout(peer: String, timeout: Duration)
    /// The oldest request in flight had no answer within `timeout`.
    case responseTimeout(peer: String, timeout: Duration)

    /// TLS verification, hostname, protocol version, ALPN or client-certificate failures: retrying
    /// will not help (a configuration error: the endpoint, --ca-file or the credentials are wrong).
    /// Every proxy failure is one too: a proxy that never let a connection through is set up wrong
    /// (the proxy URL, its credentials, or its rules), and a flapping one is retried once it worked.
    public var isConfigurationError: Bool {
        if case .proxy = self { return true }
        guard case let .tls(error) = self else { return false }
        switch error {
        case .certificateVerificationFailed, .certificateNotYetValid, .hostnameMismatch, .noSubjectAltName, .notTLS,
             .protocolVersionRefused, .alpnNotNegotiated,
             .clientCertificateRejected, .unusableFile, .certificateKeyMismatch, .pkcs12WrongPassword, .pkcs12PasswordNeeded,
             .pkcs12LegacyProviderMissing:
            return true
        case .handshakeTimedOut, .clientCertificateMissing, .handshakeFailed, .connectionFailed, .openSSL:
            return false
        }
    }

    /// The CONNECT proxy failed (it, not APNs, is to be checked).
    public var isProxyError: Bool {
        if case .proxy = self { return true }
        return false
    }

    /// One line naming what failed and where, for the run's log.
    public var description: String {
        switch self {
        case let .connect(error):
            return error.description
        case let .proxy(error):
            return error.description
        case let .tls(error):
            return error.description
        case let .protocolError(error):
            return "the server broke the HTTP/2 protocol (\(error))"
        case let .peerClosed(peer):
            return "\(peer) closed the connection"
        case let .pingTimeout(peer, timeout):
            return "\(peer) did not answer a PING within \(SocketError.milliseconds(timeout)) ms; "
                + "the connection is considered dead"
        case let .responseTimeout(peer, timeout):
            return "\(peer) did not answer a request within \(SocketError.milliseconds(timeout)) ms; "
                + "the connection is considered stalled"
        }
    }
}
