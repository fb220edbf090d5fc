/// A TLS connection that carries a plain byte stream, not HTTP/2: what Apple's retired binary
/// provider API and feedback service speak (issue 15), on either side. It owns its `TLSSession`
/// and registers it on the reactor; bytes read go to `onBytes`, and its end goes to `onEnd`, once.
///
/// Lives on one Reactor: create it and call every method on that reactor's thread.
public final class TLSStream: ReactorHandler {
    /// How a stream ended.
    public enum End: Sendable, Equatable {
        /// The peer closed it (with or without close_notify).
        case peerClosed
        /// We closed it (`close()`, or `finish()` once the output drained).
        case closedByUs
        /// TLS failed (e.g. the server refused our client certificate, which TLS 1.3 reports
        /// only after the handshake, on the first read).
        case tlsFailed(TLSError)
        /// Reading or writing failed otherwise; the text says how.
        case failed(String)
    }

    public let reactor: Reactor
    public let session: TLSSession
    private let fd: Int32
    private var onBytes: ((UnsafeRawBufferPointer) -> Void)?
    private var onEnd: ((End) -> Void)?
    private var ended = false
    private var finishing = false
    private var halfClosed = false
    private var lingerTimer: TimerID?

    /// A stream over a session whose handshake completed (and that no one has registered).
    public init(session: TLSSession, reactor: Reactor) {
        self.session = session
        self.reactor = reactor
        fd = session.socket.fd
    }

    /// Registers the socket and starts reading; whatever OpenSSL already holds is read at once.
    public func start(onBytes: @escaping (UnsafeRawBufferPointer) -> Void, onEnd: @escaping (End) -> Void) {
        self.onBytes = onBytes
        self.onEnd = onEnd
        do {
            try reactor.register(fd, interest: .readable, handler: self)
        } catch {
            session.close()
            ended = true
            reactor.schedule(after: .zero) { onEnd(.failed(error.description)) }
            return
        }
        reactor.schedule(after: .zero) { [self] in onReadable() }
    }

    /// True until the stream ended.
    public var isOpen: Bool { !ended }

    /// Bytes queued and not yet taken by the socket.
    public var pendingOutputCount: Int { session.pendingOutputCount }

    /// Queues `bytes`; call `flush()` to send what is queued.
    public func queue(_ bytes: [UInt8]) { session.queueOutput(bytes) }

    /// Lets a producer append to an array whose bytes are then queued (one copy into the queue).
    public func appendOutput(_ produce: (inout [UInt8]) -> Void) { session.appendOutput(produce) }

    /// Sends what is queued, as far as the socket takes it; the rest goes when it is writable.
    public func flush() {
        guard !ended else { return }
        do {
            guard !halfClosed else { return }
            let done = try session.flush()
            reactor.setInterest(done ? .readable : [.readable, .writable], for: fd)
            if done && finishing { halfClose() }
        } catch {
            writeFailed(error)
        }
    }

    /// A write failed: the peer may have said why before it closed (a TLS alert, such as a refused
    /// client certificate, or its last words: a gateway's error response), so what arrived is
    /// read and delivered first, and a read failure names the end when there is one.
    private func writeFailed(_ error: TLSError) {
        do {
            _ = try session.readAvailable { bytes in if !ended { onBytes?(bytes) } }
        } catch let readError as TLSError {
            return end(.tlsFailed(readError))
        } catch {}
        end(.tlsFailed(error))
    }

    /// Sends what is queued, then half-closes, reads on (handing the peer's bytes to `onBytes`)
    /// until the peer closes or a few seconds pass, and closes: a server that said all it had.
    /// Closing at once with the peer's bytes unread would reset the connection, and a reset can
    /// destroy what the peer has not read yet (the error response it must see).
    public func finish() {
        guard !ended else { return }
        finishing = true
        flush()
    }

    /// Closes now; what is queued is dropped.
    public func close() {
        end(.closedByUs)
    }

    private func halfClose() {
        halfClosed = true
        session.closeWrite()
        lingerTimer = reactor.schedule(after: .seconds(3)) { [self] in
            lingerTimer = nil
            end(.closedByUs)
        }
    }

    public func onReadable() {
        guard !ended else { return }
        do {
            let status = try session.readAvailable { bytes in if !ended { onBytes?(bytes) } }
            if status == .closed { end(.peerClosed) }
        } catch let error as TLSError {
            end(.tlsFailed(error))
        } catch {
            end(.failed("\(error)"))
        }
    }

    public func onWritable() { flush() }

    public func onHangup() {
        onReadable()
        end(.peerClosed)
    }

    public func onReactorStop() { end(.closedByUs) }

    private func end(_ how: End) {
        guard !ended else { return }
        ended = true
        if let lingerTimer { reactor.cancel(lingerTimer) }
        lingerTimer = nil
        reactor.deregister(fd)
        session.close()
        let onEnd = self.onEnd
        self.onEnd = nil
        onBytes = nil
        onEnd?(how)
    }
}

extension TLSStream {
    /// Why a client stream could not be opened.
    public enum OpenError: Error, Sendable, CustomStringConvertible {
        case connect(SocketError)
        case tls(TLSError)

        public var description: String {
            switch self {
            case .connect(let error): error.description
            case .tls(let error): error.description
            }
        }
    }

    /// Connects to `address`, does the TLS handshake as a client of `host` (SNI and name check) with
    /// `context` (which offers no ALPN for these protocols), and hands over the stream, unstarted.
    /// Reactor thread only; `completion` runs later on it, exactly once.
    public static func open(to address: SocketAddress, host: String, context: TLSContext, on reactor: Reactor,
                            timeout: Duration, completion: @escaping (Result<TLSStream, OpenError>) -> Void) {
        Socket.connect(to: address, timeout: timeout, on: reactor) { result in
            switch result {
            case .failure(let error):
                completion(.failure(.connect(error)))
            case .success(let socket):
                let session: TLSSession
                do throws(TLSError) {
                    session = try TLSSession(client: context, socket: socket, host: host)
                } catch {
                    socket.close()
                    return completion(.failure(.tls(error)))
                }
                session.startHandshake(on: reactor, timeout: timeout) { handshake in
                    switch handshake {
                    case .success: completion(.success(TLSStream(session: session, reactor: reactor)))
                    case .failure(let error): completion(.failure(.tls(error)))
                    }
                }
            }
        }
    }
}
