import APNs
import Dispatch
import Synchronization
import Transport

/// One request to a channel-management host: what `ChannelManagementAPI` builds.
struct ManagementRequest: Sendable, Equatable {
    var method: String
    var path: String
    /// Headers besides the authorization, which `ManagementClient` adds with token auth.
    var headers: [H2Header]
    var body: [UInt8]
}

/// Where a channel command's requests go, and with which credential.
struct ManagementTarget: Sendable {
    var endpoint: Endpoint
    /// Through this CONNECT proxy; nil: directly.
    var proxy: HTTPProxy?
    /// Trust, and the client certificate with certificate auth.
    var tls: TLSContext
    /// Token auth: the key's one token source; nil with certificate auth.
    var tokens: TokenSource?
}

/// APNs' final word on one request, after the retries a 429 or 5xx earns.
enum ManagementAnswer: Sendable, Equatable {
    /// 2xx: the status, the `apns-channel-id` APNs sent (a create's new channel) and the body.
    /// `afterLoss`: an earlier attempt was lost with its connection, and may have been carried out too.
    case accepted(status: Int, channelID: String?, body: [UInt8], afterLoss: Bool)
    /// Refused for good: a 4xx, or a 429 or 5xx still on the last attempt. `reason` is APNs'
    /// word (nil when its body had none); `afterLoss`: an earlier attempt was lost with its
    /// connection, so it may have been carried out.
    case refused(status: Int, reason: String?, afterLoss: Bool)
    /// No answer: every attempt was lost with its connection.
    case unanswered(detail: String)

    var isAccepted: Bool { if case .accepted = self { true } else { false } }
}

/// Why the requests could not all be made: APNs refused the credentials, or could not be reached.
struct ManagementStop: Error, Equatable {
    let message: String
}

/// How hard a few management requests try.
struct ManagementPolicy: Sendable {
    /// Requests in flight at once on the one connection (with token auth, one until the first
    /// answer that is not a 403, as for every APNs connection).
    var concurrency = 8
    /// Attempts per request before a 429, a 5xx or a lost stream is its final answer.
    var maxAttempts = 5
    /// Connections that end before any answer, in a row, before the host counts as unreachable.
    var connectAttempts = 3
    /// The retry and reconnect backoff (doubling, with jitter).
    var backoffBaseMilliseconds = 500
    var backoffCapMilliseconds = 8_000
    var connectTimeout = Duration.seconds(10)
    var responseTimeout = Duration.seconds(30)
}

/// A few requests to one channel-management host over the project's HTTP/2 client: one
/// `ClientConnection` on a reactor thread of its own, as `send`'s workers use it, reconnecting when
/// it ends, retrying 429 and 5xx with backoff and making a new provider token on
/// `ExpiredProviderToken`. The calling thread waits.
enum ManagementClient {
    /// Sends `requests` (each `policy.concurrency` at a time, in order) and hands each final
    /// answer to `onAnswer` with the request's index, as it comes, on the client's thread. With
    /// `stopAtFirstRefusal`, nothing more is sent once one is refused (those in flight still
    /// answer). Throws when the run stopped early: credentials refused, or the host unreachable.
    static func run(_ requests: [ManagementRequest], to target: ManagementTarget, policy: ManagementPolicy = .init(),
                    stopAtFirstRefusal: Bool,
                    onAnswer: @escaping @Sendable (Int, ManagementAnswer) -> Void) throws(ManagementStop) {
        guard !requests.isEmpty else { return }
        let reactor: Reactor
        do { reactor = try Reactor.start(name: "apns-bulk chan") } catch {
            throw ManagementStop(message: "cannot start the client's thread: \(error)")
        }
        defer {
            reactor.stop()
            reactor.join()
        }
        let done = DispatchSemaphore(value: 0)
        let end = Mutex<ManagementStop?>(nil)
        reactor.execute {
            let exchange = ManagementExchange(requests: requests, target: target, policy: policy, reactor: reactor,
                                              stopAtFirstRefusal: stopAtFirstRefusal, onAnswer: onAnswer) { stop in
                end.withLock { $0 = stop }
                done.signal()
            }
            exchange.start()
        }
        done.wait()
        if let stop = end.withLock({ $0 }) { throw stop }
    }
}
