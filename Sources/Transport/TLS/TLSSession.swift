import COpenSSL
import Glibc

/// Where a non-blocking handshake stands after one step.
public enum TLSHandshakeStatus: Sendable, Equatable {
    case complete
    /// Call `handshake()` again when the socket is readable.
    case wantRead
    /// Call `handshake()` again when the socket is writable.
    case wantWrite
}

/// Whether the connection stays open after `readAvailable` delivered what there was.
public enum TLSReadStatus: Sendable, Equatable {
    /// Everything available was delivered (or this turn's budget was): wait for readable.
    case open
    /// The peer closed the connection (close_notify, or end of file without one).
    case closed
}

/// One TLS connection over a non-blocking socket it owns: OpenSSL's `SSL` on the socket's
/// descriptor (SSL_set_fd: no extra copy through memory BIOs; OpenSSL calls read/write itself).
///
/// Threading: not Sendable. Create it and use it on the thread of the reactor the socket is
/// registered on. Between reactor callbacks, the owner:
/// - drives the handshake (`handshake()`, or `startHandshake(on:timeout:completion:)`);
/// - on readable, calls `readAvailable`, which hands decrypted bytes to the session layer;
/// - queues the session layer's output in batches (`queueOutput`) and calls `flush()`, keeping
///   writable interest on the reactor exactly while `wantsWritable` is true;
/// - on writable, calls `flush()` and then `readAvailable` (a TLS 1.3 key update can make a read
///   wait for the socket to drain);
/// - ends with `close()` after deregistering the descriptor.
public final class TLSSession {
    /// The socket this session owns; register `socket.fd` on the reactor.
    public let socket: Socket
    /// The context the session was made from (its side, trust and ALPN).
    public let context: TLSContext
    /// The host connected to (client) or the client's address (server), for messages.
    public let peer: String
    /// The handshake finished and ALPN chose h2: application data may flow.
    public private(set) var isHandshakeComplete = false

    private let ssl: OpaquePointer  // SSL*
    private let readBuffer: UnsafeMutableRawBufferPointer
    private let output = TLSOutputQueue()
    private var failed = false
    /// The first record header received during a client handshake: a count (0 or 5), then the bytes.
    private let firstRecordHeader: UnsafeMutablePointer<UInt8> = {
        let header = UnsafeMutablePointer<UInt8>.allocate(capacity: 6)
        header.initialize(repeating: 0, count: 6)
        return header
    }()
    /// Bytes one `readAvailable` call delivers before yielding to other connections.
    private static let readBudget = 1 << 20

    /// A client session to `host` (a DNS name: SNI and name check; an IP literal: IP check, no SNI).
    public convenience init(client context: TLSContext, socket: Socket, host: String) throws(TLSError) {
        precondition(!context.isServer, "TLSSession(client:) needs a client TLSContext")
        try self.init(context: context, socket: socket, peer: host)
        SSL_set_connect_state(ssl)
        guard let parameters = SSL_get0_param(ssl) else { throw OpenSSLErrors.failure("SSL_get0_param") }
        if SocketAddress(ip: host, port: 0) != nil {
            guard X509_VERIFY_PARAM_set1_ip_asc(parameters, host) == 1 else {
                throw OpenSSLErrors.failure("X509_VERIFY_PARAM_set1_ip_asc")
            }
        } else {
            // Names are matched against the subjectAltName only, never the subject's CN (RFC 9525).
            X509_VERIFY_PARAM_set_hostflags(parameters, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS
                                                                | X509_CHECK_FLAG_NEVER_CHECK_SUBJECT))
            guard X509_VERIFY_PARAM_set1_host(parameters, host, 0) == 1,
                  apnsbulk_SSL_set_tlsext_host_name(ssl, host) == 1 else {
                throw TLSError.handshakeFailed(peer: host, detail: "'\(host)' cannot be used as a TLS server name")
            }
        }
        // Until the handshake ends, keep the server's first record header: a server that does not
        // speak TLS is then named for what it answered.
        SSL_set_ex_data(ssl, 0, UnsafeMutableRawPointer(firstRecordHeader))
        SSL_set_msg_callback(ssl, keepFirstRecordHeader)
    }

    /// A server session for an accepted socket; `peer` names the client in messages.
    public convenience init(server context: TLSContext, socket: Socket, peer: String) throws(TLSError) {
        precondition(context.isServer, "TLSSession(server:) needs a server TLSContext")
        try self.init(context: context, socket: socket, peer: peer)
        SSL_set_accept_state(ssl)
    }

    private init(context: TLSContext, socket: Socket, peer: String) throws(TLSError) {
        _ = SIGPIPEPolicy.ignored
        guard let ssl = SSL_new(context.context) else { throw OpenSSLErrors.failure("SSL_new") }
        guard SSL_set_fd(ssl, socket.fd) == 1 else {
            SSL_free(ssl)
            throw OpenSSLErrors.failure("SSL_set_fd")
        }
        self.ssl = ssl
        self.socket = socket
        self.context = context
        self.peer = peer
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
    }

    deinit {
        SSL_free(ssl)
        readBuffer.deallocate()
        firstRecordHeader.deallocate()
    }

    // MARK: Handshake

    /// One step of the non-blocking handshake. A client also checks that the server selected
    /// HTTP/2 by ALPN, and throws `.alpnNotNegotiated` otherwise.
    public func handshake() throws(TLSError) -> TLSHandshakeStatus {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            isHandshakeComplete = true
            if !context.isServer { SSL_set_msg_callback(ssl, nil) }
            if !context.isServer, context.requiresH2, negotiatedProtocol != "h2" {
                failed = true
                throw TLSError.alpnNotNegotiated(peer: peer)
            }
            return .complete
        }
        let error = SSL_get_error(ssl, result)
        let code = errno
        switch error {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        default:
            failed = true
            let header = Array(UnsafeBufferPointer(start: firstRecordHeader + 1, count: Int(firstRecordHeader[0])))
            if !context.isServer, TLSFailure.isNotTLS(header) {
                _ = OpenSSLErrors.take()
                throw TLSError.notTLS(peer: peer, answer: TLSFailure.notTLSAnswer(header))
            }
            throw TLSFailure.classify(ssl: ssl, sslError: error, errno: code, errors: OpenSSLErrors.take(),
                                      peer: peer, isServer: context.isServer, duringHandshake: true)
        }
    }

    /// The ALPN protocol selected ("h2"), or nil when none was.
    public var negotiatedProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// "TLSv1.3", "TLSv1.2", ...
    public var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    /// The subject of the certificate the peer presented (a server's, or a client's under mutual
    /// TLS), e.g. "/UID=com.example.app/CN=...", or nil when it presented none.
    public var peerCertificateSubject: String? {
        guard let certificate = apnsbulk_SSL_get_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        return TLSIdentity.subject(of: certificate)
    }

    // MARK: Reading

    /// Reads and decrypts what the socket has, handing each chunk (up to 64 KiB, valid only during
    /// the call) to `deliver`, until the socket would block, the peer closed, or about 1 MiB went
    /// by (then returns `.open`: level-triggered readiness brings the rest on the next turn).
    /// Throws `TLSError` for TLS failures and whatever `deliver` throws.
    public func readAvailable(_ deliver: (UnsafeRawBufferPointer) throws -> Void) throws -> TLSReadStatus {
        var delivered = 0
        while true {
            ERR_clear_error()
            let count = SSL_read(ssl, readBuffer.baseAddress, Int32(readBuffer.count))
            if count > 0 {
                try deliver(UnsafeRawBufferPointer(start: readBuffer.baseAddress, count: Int(count)))
                delivered += Int(count)
                if delivered >= TLSSession.readBudget, SSL_has_pending(ssl) == 0 { return .open }
                continue
            }
            let error = SSL_get_error(ssl, count)
            let code = errno
            switch error {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                return .open
            case SSL_ERROR_ZERO_RETURN:
                return .closed
            case SSL_ERROR_SYSCALL where code == 0:
                return .closed
            default:
                let errors = OpenSSLErrors.take()
                failed = true
                if errors.library == ERR_LIB_SSL, errors.reason == SSL_R_UNEXPECTED_EOF_WHILE_READING {
                    return .closed
                }
                throw TLSFailure.classify(ssl: ssl, sslError: error, errno: code, errors: errors,
                                          peer: peer, isServer: context.isServer, duringHandshake: false)
            }
        }
    }

    // MARK: Writing

    /// Appends bytes to the output queue; nothing is sent until `flush()`.
    public func queueOutput(_ bytes: UnsafeRawBufferPointer) {
        if let base = bytes.baseAddress { output.append(base, count: bytes.count) }
    }

    /// `queueOutput(_:)` for an array.
    public func queueOutput(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { queueOutput($0) }
    }

    /// `queueOutput(_:)` for the transport's own producers (nghttp2's output chunks).
    @inline(__always)
    func queueOutput(_ bytes: UnsafePointer<UInt8>, count: Int) {
        output.append(bytes, count: count)
    }

    /// Queues an HTTP/2 frame header (9 bytes).
    @inline(__always)
    func queueFrameHeader(_ header: UnsafePointer<UInt8>) {
        output.appendFrameHeader(header)
    }

    /// Lets a producer append to an array whose bytes are then queued, e.g.
    /// `try tls.appendOutput { try h2.drainOutput(into: &$0, limit: 1 << 20) }`. The array starts
    /// empty; a producer's size limit caps what it adds (`pendingOutputCount` tells what waits).
    public func appendOutput<Result, Failure: Error>(
        _ produce: (inout [UInt8]) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try output.append(producing: produce)
    }

    /// Bytes queued and not yet accepted by the socket.
    public var pendingOutputCount: Int { output.pendingCount }

    /// True while output waits for the socket: keep writable interest on exactly then.
    public var wantsWritable: Bool { output.pendingCount > 0 }

    /// Encrypts and sends the queued output with one SSL_write per call of this loop (OpenSSL
    /// cuts it into 16 KiB records). Returns true when everything went out, false when the
    /// socket would block (the rest stays queued).
    @discardableResult
    public func flush() throws(TLSError) -> Bool {
        while output.pendingCount > 0 {
            ERR_clear_error()
            let written = SSL_write(ssl, output.unsent, Int32(clamping: output.pendingCount))
            if written > 0 {
                output.sent(Int(written))
                continue
            }
            let error = SSL_get_error(ssl, written)
            let code = errno
            if error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_WANT_READ {
                output.compact()
                return false
            }
            failed = true
            throw TLSFailure.classify(ssl: ssl, sslError: error, errno: code, errors: OpenSSLErrors.take(),
                                      peer: peer, isServer: context.isServer, duringHandshake: false)
        }
        return true
    }

    // MARK: Closing

    /// Half-close: close_notify and the socket's FIN go out; reading stays possible. For a server
    /// that has said everything: closing at once with the client's bytes unread would make the
    /// kernel reset the connection, and a reset can destroy what the client has not read yet.
    public func closeWrite() {
        if isHandshakeComplete, !failed, !socket.isClosed {
            ERR_clear_error()
            _ = SSL_shutdown(ssl)
            ERR_clear_error()
        }
        if !socket.isClosed { _ = Glibc.shutdown(socket.fd, Int32(SHUT_WR)) }
    }

    /// Sends close_notify if the connection is healthy (best effort, never blocks) and closes the
    /// socket. Deregister `socket.fd` from the reactor first.
    public func close() {
        if isHandshakeComplete, !failed, !socket.isClosed {
            ERR_clear_error()
            _ = SSL_shutdown(ssl)
            ERR_clear_error()
        }
        failed = true
        socket.close()
    }
}

/// OpenSSL writes to sockets with write(2), which raises SIGPIPE on a connection the peer reset;
/// the default action would kill the process. A TLS client ignores it, as h2load does.
enum SIGPIPEPolicy {
    static let ignored: Bool = {
        signal(SIGPIPE, SIG_IGN)
        return true
    }()
}

/// OpenSSL's message callback (client handshakes only): copies the first record header the server
/// sent into the session's `firstRecordHeader` (reached through the SSL's ex_data slot 0).
private func keepFirstRecordHeader(writing: Int32, version: Int32, contentType: Int32, buffer: UnsafeRawPointer?,
                                   length: Int, ssl: OpaquePointer?, argument: UnsafeMutableRawPointer?) {
    guard writing == 0, contentType == SSL3_RT_HEADER, length >= 5, let buffer, let ssl,
          let store = SSL_get_ex_data(ssl, 0)?.assumingMemoryBound(to: UInt8.self), store[0] == 0 else { return }
    (store + 1).update(from: buffer.assumingMemoryBound(to: UInt8.self), count: 5)
    store[0] = 5
}
