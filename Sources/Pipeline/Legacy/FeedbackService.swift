import APNs
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import Transport

/// A client of Apple's retired feedback service (issue 15): TLS with the client certificate,
/// nothing sent, every tuple the service has read until it closes.
public enum FeedbackService {
    /// feedback.push.apple.com:2196.
    public static let production = Endpoint(host: "feedback.push.apple.com", port: 2196)
    /// feedback.sandbox.push.apple.com:2196.
    public static let sandbox = Endpoint(host: "feedback.sandbox.push.apple.com", port: 2196)

    /// What the service sent.
    public struct Answer: Sendable {
        /// Every whole tuple, in the order received.
        public var tuples: [FeedbackTuple]
        /// Bytes at the end that were not a whole tuple (the connection was cut mid-tuple).
        public var truncatedBytes: Int
    }

    /// Why nothing could be read.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// Connects to `endpoint` with `tls` (a client context that offers no ALPN and holds the
    /// certificate), reads until the service closes, and parses the tuples. Blocks the calling
    /// thread (DNS, then a reactor thread of its own) for up to `timeoutSeconds`.
    public static func read(from endpoint: Endpoint, tls: TLSContext, timeoutSeconds: Double) throws(Failure) -> Answer {
        let address: SocketAddress
        do {
            guard let first = try endpoint.resolveBlocking().first else {
                throw Failure(description: "cannot resolve \(endpoint.host): the name has no address")
            }
            address = first
        } catch let error as Failure {
            throw error
        } catch {
            throw Failure(description: "cannot resolve \(endpoint.host): \(error)")
        }
        let reactor: Reactor
        do { reactor = try Reactor.start(name: "apns-bulk feedback") } catch { throw Failure(description: error.description) }
        defer {
            reactor.stop()
            reactor.join()
        }
        let state = Mutex<(bytes: [UInt8], end: String??)>(([], nil))
        let timeout = Duration.milliseconds(Int(timeoutSeconds * 1000))
        reactor.execute {
            TLSStream.open(to: address, host: endpoint.host, context: tls, on: reactor, timeout: timeout) { result in
                switch result {
                case .failure(let error):
                    state.withLock { $0.end = .some(error.description) }
                case .success(let stream):
                    stream.start(onBytes: { chunk in state.withLock { $0.bytes += Array(chunk) } }, onEnd: { end in
                        let detail: String? = if case .failed(let text) = end { text } else { nil }
                        state.withLock { $0.end = .some(detail) }
                    })
                }
            }
        }
        let deadline = Reactor.monotonicNanoseconds() &+ UInt64(timeoutSeconds * 1e9)
        while state.withLock({ $0.end == nil }) && Reactor.monotonicNanoseconds() < deadline { usleep(2000) }
        let (bytes, end) = state.withLock { ($0.bytes, $0.end) }
        guard let end else {
            throw Failure(description: "\(endpoint) did not close the connection within \(timeoutSeconds) s")
        }
        if let detail = end, bytes.isEmpty { throw Failure(description: "\(endpoint): \(detail)") }
        let parsed = FeedbackTuple.parseAll(bytes)
        return Answer(tuples: parsed.tuples, truncatedBytes: parsed.truncatedBytes)
    }
}
