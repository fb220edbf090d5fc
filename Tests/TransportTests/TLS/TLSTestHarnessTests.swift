import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Transport

/// Shared pieces for the Reactor, Socket, Endpoint and TLS tests (no tests of its own).

/// A value produced on another thread, waited for with a deadline so a broken test fails
/// instead of hanging.
final class TransportAwaited<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)
    private let semaphore = DispatchSemaphore(value: 0)

    func fulfil(_ newValue: Value) {
        let first = value.withLock { current -> Bool in
            guard current == nil else { return false }
            current = newValue
            return true
        }
        if first { semaphore.signal() }
    }

    func wait(seconds: Double = 10) -> Value? {
        _ = semaphore.wait(timeout: .now() + seconds)
        return value.withLock { $0 }
    }
}

/// A value shared between a test and its reactor thread, behind a lock.
final class Shared<Value: Sendable>: Sendable {
    private let state: Mutex<Value>
    init(_ value: Value) { state = Mutex(value) }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result { state.withLock { body(&$0) } }
}

/// Runs `body` with a reactor on its own thread, and stops and joins it afterwards.
func withRunningReactor<Result>(_ body: (Reactor) throws -> Result) throws -> Result {
    let reactor = try Reactor.start(name: "test-reactor")
    defer {
        reactor.stop()
        reactor.join()
    }
    return try body(reactor)
}

// MARK: A TLS echo server on a reactor

/// What the server saw of one connection's handshake.
enum ServerHandshake: Sendable, Equatable {
    case completed(alpn: String?, peerSubject: String?)
    case failed(TLSError)
}

/// Accepts TLS connections on 127.0.0.1 and echoes every byte back. Lives on the reactor thread.
final class TLSEchoServer: ReactorHandler {
    let listener: Socket
    let port: UInt16
    private let reactor: Reactor
    private let context: TLSContext
    private let handshakes: TransportAwaited<ServerHandshake>
    private var connections: [Int32: TLSEchoConnection] = [:]

    /// Starts listening on the reactor thread; returns the port once the listener is registered.
    static func start(on reactor: Reactor, context: TLSContext,
                      handshakes: TransportAwaited<ServerHandshake>) throws -> UInt16 {
        let port = TransportAwaited<Result<UInt16, SocketError>>()
        reactor.execute {
            do throws(SocketError) {
                let server = try TLSEchoServer(reactor: reactor, context: context, handshakes: handshakes)
                try reactor.register(server.listener.fd, interest: .readable, handler: server)
                port.fulfil(.success(server.port))
            } catch {
                port.fulfil(.failure(error))
            }
        }
        return try #require(port.wait()).get()
    }

    private init(reactor: Reactor, context: TLSContext, handshakes: TransportAwaited<ServerHandshake>) throws(SocketError) {
        self.reactor = reactor
        self.context = context
        self.handshakes = handshakes
        listener = try Socket.listen(on: .loopback())
        port = try listener.localAddress().port
    }

    func onReadable() {
        while let socket = try? listener.accept() {
            guard let session = try? TLSSession(server: context, socket: socket, peer: "test client") else { continue }
            session.startHandshake(on: reactor, timeout: .seconds(5)) { [self] result in
                switch result {
                case let .failure(error):
                    handshakes.fulfil(.failed(error))
                case .success:
                    handshakes.fulfil(.completed(alpn: session.negotiatedProtocol,
                                                 peerSubject: session.peerCertificateSubject))
                    let connection = TLSEchoConnection(session: session, reactor: reactor) { [weak self] fd in
                        self?.connections[fd] = nil
                    }
                    connections[session.socket.fd] = connection
                    try? reactor.register(session.socket.fd, interest: .readable, handler: connection)
                }
            }
        }
    }

    func onWritable() {}
    func onHangup() {}

    func onReactorStop() {
        reactor.deregister(listener.fd)
        listener.close()
    }
}

/// One echoing server connection: what it reads, it queues back.
final class TLSEchoConnection: ReactorHandler {
    private let session: TLSSession
    private let reactor: Reactor
    private let onClose: (Int32) -> Void

    init(session: TLSSession, reactor: Reactor, onClose: @escaping (Int32) -> Void) {
        self.session = session
        self.reactor = reactor
        self.onClose = onClose
    }

    func onReadable() {
        do {
            let status = try session.readAvailable { bytes in session.queueOutput(bytes) }
            try session.flush()
            if status == .closed { return close() }
            reactor.setInterest(session.wantsWritable ? [.readable, .writable] : .readable, for: session.socket.fd)
        } catch {
            close()
        }
    }

    func onWritable() {
        do {
            try session.flush()
            reactor.setInterest(session.wantsWritable ? [.readable, .writable] : .readable, for: session.socket.fd)
        } catch {
            close()
        }
    }

    func onHangup() { close() }
    func onReactorStop() { close() }

    private func close() {
        let fd = session.socket.fd
        reactor.deregister(fd)
        session.close()
        onClose(fd)
    }
}

// MARK: A TLS client that sends bytes and waits for them to come back

enum ClientOutcome: Sendable, Equatable {
    case echoed(alpn: String?, version: String, bytes: [UInt8])
    case tlsFailed(TLSError)
    case failed(String)

    var tlsError: TLSError? { if case let .tlsFailed(error) = self { error } else { nil } }
}

/// Connects to 127.0.0.1:`port` naming the server `host`, does the handshake, sends `payload`
/// and reads until as many bytes came back (or the connection ends).
final class TLSClientRun: ReactorHandler {
    private let reactor: Reactor
    private let payload: [UInt8]
    private let outcome: TransportAwaited<ClientOutcome>
    private let socketBufferSize: Int32?
    private let blockedFlushes: Shared<Int>?
    private var session: TLSSession?
    private var received: [UInt8] = []

    /// `socketBufferSize` shrinks the client's kernel buffers so writes must block and resume;
    /// `blockedFlushes` then counts the flushes that could not send everything.
    static func run(on reactor: Reactor, port: UInt16, host: String, context: TLSContext, payload: [UInt8],
                    socketBufferSize: Int32? = nil, blockedFlushes: Shared<Int>? = nil) -> ClientOutcome {
        let outcome = TransportAwaited<ClientOutcome>()
        reactor.execute {
            let client = TLSClientRun(reactor: reactor, payload: payload, outcome: outcome,
                                      socketBufferSize: socketBufferSize, blockedFlushes: blockedFlushes)
            client.start(port: port, host: host, context: context)
        }
        return outcome.wait() ?? .failed("the client did not finish in time")
    }

    private init(reactor: Reactor, payload: [UInt8], outcome: TransportAwaited<ClientOutcome>,
                 socketBufferSize: Int32?, blockedFlushes: Shared<Int>?) {
        self.reactor = reactor
        self.payload = payload
        self.outcome = outcome
        self.socketBufferSize = socketBufferSize
        self.blockedFlushes = blockedFlushes
    }

    private func start(port: UInt16, host: String, context: TLSContext) {
        Socket.connect(to: .loopback(port: port), timeout: .seconds(5), on: reactor) { [self] result in
            switch result {
            case let .failure(error):
                outcome.fulfil(.failed(error.description))
            case let .success(socket):
                if let size = socketBufferSize { try? socket.setBufferSizes(send: size, receive: size) }
                do throws(TLSError) {
                    let session = try TLSSession(client: context, socket: socket, host: host)
                    self.session = session
                    session.startHandshake(on: reactor, timeout: .seconds(5)) { [self] result in
                        switch result {
                        case let .failure(error): fail(error)
                        case .success: exchange(session)
                        }
                    }
                } catch {
                    fail(error)
                }
            }
        }
    }

    private func exchange(_ session: TLSSession) {
        session.appendOutput { $0.append(contentsOf: payload) }
        do {
            try flush(session)
            try reactor.register(session.socket.fd,
                                 interest: session.wantsWritable ? [.readable, .writable] : .readable, handler: self)
        } catch let error as TLSError {
            fail(error)
        } catch {
            outcome.fulfil(.failed("\(error)"))
        }
    }

    func onReadable() {
        guard let session else { return }
        do {
            let status = try session.readAvailable { bytes in received.append(contentsOf: bytes) }
            if received.count >= payload.count || status == .closed { finish(session) }
        } catch let error as TLSError {
            finish(session, error)
        } catch {
            finish(session)
        }
    }

    func onWritable() {
        guard let session else { return }
        do {
            try flush(session)
            reactor.setInterest(session.wantsWritable ? [.readable, .writable] : .readable, for: session.socket.fd)
            onReadable()
        } catch {
            finish(session, error)
        }
    }

    private func flush(_ session: TLSSession) throws(TLSError) {
        if try !session.flush() { blockedFlushes?.withLock { $0 += 1 } }
    }

    func onHangup() { onReadable() }
    func onReactorStop() { if let session { finish(session) } }

    private func finish(_ session: TLSSession, _ error: TLSError? = nil) {
        reactor.deregister(session.socket.fd)
        session.close()
        if let error {
            fail(error)
        } else {
            outcome.fulfil(.echoed(alpn: session.negotiatedProtocol, version: session.protocolVersion, bytes: received))
        }
    }

    private func fail(_ error: TLSError) {
        outcome.fulfil(.tlsFailed(error))
    }
}
