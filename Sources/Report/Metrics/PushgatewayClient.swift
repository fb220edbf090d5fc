import Foundation
import Pipeline
#if canImport(Glibc)
import Glibc
#endif

/// Pushes the run's metrics to a Pushgateway from a thread of its own, so that a slow or dead
/// Pushgateway never holds up sending: the writer thread only leaves the latest text here
/// (``offer(_:)``), and the push thread sends whatever is newest when it is free. A failure is a
/// warning on stderr, once per kind (unreachable, timed out, refused with an HTTP status), never
/// fatal. ``finish(_:)`` pushes the final text, retrying briefly, and ends the thread.
// Shared by the writer/calling thread and the push thread; `pending` and `done` are behind `condition`.
final class PushgatewayClient: @unchecked Sendable {
    private let target: PushgatewayTarget
    private let path: String
    private let warn: @Sendable (String) -> Void
    private let condition = NSCondition()
    private var pending: String?
    private var done = false
    private var warned: Set<String> = []
    private var thread: Thread?
    /// Each connect, send and read gives up after this long.
    static let timeoutSeconds = 2

    init(target: PushgatewayTarget, groupingPath: String, warn: @escaping @Sendable (String) -> Void) {
        self.target = target
        path = target.pathPrefix + groupingPath
        self.warn = warn
        let thread = Thread { [self] in loop() }
        thread.name = "apns-bulk push"
        self.thread = thread
        thread.start()
    }

    /// Replaces whatever was waiting to be pushed; returns at once.
    func offer(_ text: String) {
        condition.lock()
        pending = text
        condition.signal()
        condition.unlock()
    }

    /// Stops the push thread (after a push in progress), then pushes `text`, up to 3 times over about
    /// a second when it fails. Returns whether it was accepted.
    @discardableResult
    func finish(_ text: String) -> Bool {
        condition.lock()
        done = true
        pending = nil
        condition.signal()
        while thread != nil { condition.wait() }
        condition.unlock()
        for attempt in 0..<3 {
            if attempt > 0 { Thread.sleep(forTimeInterval: 0.5) }
            if push(text, warnOnFailure: attempt == 2) { return true }
        }
        return false
    }

    private func loop() {
        while true {
            condition.lock()
            while pending == nil && !done { condition.wait() }
            let text = pending
            pending = nil
            if done {
                thread = nil
                condition.broadcast()
                condition.unlock()
                return
            }
            condition.unlock()
            if let text { push(text, warnOnFailure: true) }
        }
    }

    /// One PUT of `text` to the group: it replaces every series the group had.
    @discardableResult
    private func push(_ text: String, warnOnFailure: Bool) -> Bool {
        let body = Array(text.utf8)
        let head = "PUT \(path) HTTP/1.1\r\nHost: \(target.authority)\r\nUser-Agent: apns-bulk\r\n"
            + "Content-Type: text/plain; version=0.0.4\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let outcome = Self.exchange(host: target.host, port: target.port, request: Array(head.utf8) + body)
        switch outcome {
        case .success(let status) where (200..<300).contains(status):
            return true
        case .success(let status):
            if warnOnFailure { warnOnce("status", "the Pushgateway at \(target.authority) answered HTTP \(status) to PUT \(path)") }
        case .failure(let failure):
            if warnOnFailure { warnOnce(failure.kind, "cannot push metrics to the Pushgateway at \(target.authority): \(failure.detail)") }
        }
        return false
    }

    private func warnOnce(_ kind: String, _ message: String) {
        condition.lock()
        let first = warned.insert(kind).inserted
        condition.unlock()
        if first { warn("warning: \(message); the run goes on (this warning is shown once)") }
    }

    struct Failure: Error {
        var kind: String
        var detail: String
    }

    /// Connects, writes `request`, and reads the status line of the answer.
    static func exchange(host: String, port: Int, request: [UInt8]) -> Result<Int, Failure> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let lookup = getaddrinfo(host, String(port), &hints, &list)
        guard lookup == 0, let first = list else {
            return .failure(Failure(kind: "unreachable", detail: "cannot resolve \(host): \(String(cString: gai_strerror(lookup)))"))
        }
        defer { freeaddrinfo(list) }
        var lastError = ECONNREFUSED
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let info = node {
            node = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { lastError = errno; continue }
            defer { close(fd) }
            // Linux applies the send timeout to connect() too.
            var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            guard connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else { lastError = errno; continue }
            return talk(fd, request)
        }
        let kind = lastError == EINPROGRESS || lastError == EAGAIN || lastError == ETIMEDOUT ? "timeout" : "unreachable"
        return .failure(Failure(kind: kind, detail: "cannot connect: \(String(cString: strerror(lastError)))"))
    }

    private static func talk(_ fd: Int32, _ request: [UInt8]) -> Result<Int, Failure> {
        var offset = 0
        while offset < request.count {
            let sent = request.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EINTR { continue }
                return .failure(ioFailure("sending", errno))
            }
            offset += sent
        }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while !answer.contains(0x0A) && answer.count < 8192 {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(ioFailure("reading the answer", errno))
            }
            if count == 0 { break }
            answer += chunk[0..<count]
        }
        // "HTTP/1.1 200 OK"
        let line = String(decoding: answer.prefix { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self)
        let parts = line.split(separator: " ")
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
            return .failure(Failure(kind: "protocol", detail: "not an HTTP answer: \(line.prefix(80))"))
        }
        return .success(status)
    }

    private static func ioFailure(_ what: String, _ code: Int32) -> Failure {
        Failure(kind: code == EAGAIN || code == EWOULDBLOCK ? "timeout" : "io",
                detail: "\(what): \(code == EAGAIN || code == EWOULDBLOCK ? "no answer within \(timeoutSeconds) s" : String(cString: strerror(code)))")
    }
}
