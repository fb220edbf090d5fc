import Foundation
import Synchronization
import APNs
import Transport

/// A real HTTP/2-over-TLS client for the mock's network tests: connects to 127.0.0.1, submits
/// requests as stream slots allow, and reports every event until all requests ended, the
/// connection closed, or `timeout` passed. Runs on its own reactor thread.
final class MockTestClient: ReactorHandler {
    struct Request: Sendable {
        var path: String
        var headers: [H2Header]
        var body: [UInt8]
        var method = "POST"
    }

    struct Outcome: Sendable {
        var events: [H2ClientEvent] = []
        var connectionClosed = false
        var pingAcknowledged = false
        var responses: [H2Response] {
            events.compactMap { if case .response(let r) = $0 { r } else { nil } }
        }
        var notProcessed: [UInt64] {
            events.compactMap { if case .notProcessed(let tag, _) = $0 { tag } else { nil } }
        }
        var lost: [UInt64] {
            events.compactMap { if case .lost(let tag, _) = $0 { tag } else { nil } }
        }
        var streamLimits: [Int] {
            events.compactMap { if case .maxConcurrentStreamsChanged(let n) = $0 { n } else { nil } }
        }
    }

    private let reactor: Reactor
    private let requests: [Request]
    private let pingAfterResponses: Int?
    private let captured: H2CapturedHeaders
    private var tls: TLSSession?
    private var session: H2ClientSession?
    private var next = 0
    private var ended = 0
    private var outcome = Outcome()
    private let done: (Outcome) -> Void
    private var finished = false

    /// The response headers kept by default: APNs' `apns-id` (as text) and `apns-unique-id`.
    static let apnsHeaders = H2CapturedHeaders(text: ResponseHeaderNames.apnsID, uuid: ResponseHeaderNames.uniqueID)

    /// Runs the requests; `pingAfterResponses` sends a PING once that many responses arrived.
    /// `captured` names the response headers kept (`H2Response.apnsID` holds the text one).
    static func run(port: UInt16, trust: CertificateAuthority, identity: TLSIdentity? = nil,
                    requests: [Request], pingAfterResponses: Int? = nil, timeout: Duration = .seconds(5),
                    captured: H2CapturedHeaders = apnsHeaders) throws -> Outcome {
        let context = try TLSContext.client(additionalTrust: .authority(trust), identity: identity)
        let reactor = try Reactor.start(name: "mock-test-client")
        defer { reactor.stop(); reactor.join() }
        let result = Mutex<Outcome?>(nil)
        let box = UncheckedBox(requests: requests)
        reactor.execute {
            let client = MockTestClient(reactor: reactor, requests: box.requests, pingAfterResponses: pingAfterResponses,
                                        captured: captured) { outcome in
                result.withLock { $0 = outcome }
            }
            client.start(port: port, context: context, timeout: timeout)
        }
        let deadline = Date().addingTimeInterval(Double(timeout.components.seconds) + 5)
        while Date() < deadline {
            if let outcome = result.withLock({ $0 }) { return outcome }
            usleep(2000)
        }
        throw MockTestClientError.noOutcome
    }

    private init(reactor: Reactor, requests: [Request], pingAfterResponses: Int?, captured: H2CapturedHeaders,
                 done: @escaping (Outcome) -> Void) {
        self.reactor = reactor
        self.requests = requests
        self.pingAfterResponses = pingAfterResponses
        self.captured = captured
        self.done = done
    }

    private func start(port: UInt16, context: TLSContext, timeout: Duration) {
        reactor.schedule(after: timeout) { [self] in finish() }
        Socket.connect(to: .loopback(port: port), timeout: .seconds(5), on: reactor) { [self] result in
            guard case .success(let socket) = result,
                  let tls = try? TLSSession(client: context, socket: socket, host: "127.0.0.1") else { return finish() }
            self.tls = tls
            tls.startHandshake(on: reactor, timeout: .seconds(5)) { [self] result in
                guard case .success = result,
                      let session = try? H2ClientSession(configuration: .init(
                          authority: "127.0.0.1", maxStreams: 1000,
                          capturedHeaders: captured)),
                      (try? reactor.register(tls.socket.fd, interest: .readable, handler: self)) != nil else { return finish() }
                self.session = session
                pump()
            }
        }
    }

    private func pump() {
        guard let session, let tls, !finished else { return }
        while next < requests.count, session.freeStreamSlots > 0 {
            let request = requests[next]
            guard (try? session.submit(path: request.path, headers: request.headers, body: request.body,
                                       tag: UInt64(next), submittedAt: 0, method: request.method)) != nil else { break }
            next += 1
        }
        do {
            _ = try tls.appendOutput { (buffer) throws(H2Error) -> Int in try session.drainOutput(into: &buffer) }
            try tls.flush()
        } catch {
            outcome.connectionClosed = true
            return finish()
        }
        reactor.setInterest(tls.wantsWritable ? [.readable, .writable] : .readable, for: tls.socket.fd)
        if ended == requests.count, pingAfterResponses == nil || outcome.pingAcknowledged { finish() }
    }

    func onReadable() {
        guard let session, let tls else { return }
        let status: TLSReadStatus
        do {
            status = try tls.readAvailable { bytes in try session.receive(Array(bytes)) }
        } catch {
            status = .closed
        }
        session.drainEvents { event in
            outcome.events.append(event)
            switch event {
            case .response, .notProcessed, .lost: ended += 1
            case .pingAcknowledged: outcome.pingAcknowledged = true
            default: break
            }
        }
        if let pingAfterResponses, outcome.responses.count == pingAfterResponses, !session.isPingOutstanding,
           !outcome.pingAcknowledged {
            _ = try? session.submitPing()
        }
        if status == .closed {
            outcome.connectionClosed = true
            session.terminate()
            session.drainEvents { outcome.events.append($0) }
            return finish()
        }
        pump()
    }

    func onWritable() { pump() }
    func onHangup() { onReadable() }
    func onReactorStop() { finish() }

    private func finish() {
        guard !finished else { return }
        finished = true
        if let tls {
            reactor.deregister(tls.socket.fd)
            tls.close()
        }
        done(outcome)
    }
}

enum MockTestClientError: Error { case noOutcome }

private struct UncheckedBox: Sendable {
    let requests: [MockTestClient.Request]
}

extension MockTestClient.Request {
    /// A valid alert for `deviceToken` with a provider token (`jwt`).
    static func alert(_ deviceToken: String, jwt: String?, apnsID: String? = nil) -> Self {
        var headers = [H2Header("apns-topic", "com.example.app"), H2Header("apns-push-type", "alert")]
        if let jwt { headers.append(H2Header("authorization", "bearer " + jwt)) }
        if let apnsID { headers.append(H2Header("apns-id", apnsID)) }
        return .init(path: "/3/device/" + deviceToken, headers: headers, body: Array(#"{"aps":{"alert":"hi"}}"#.utf8))
    }
}
