/// Opening a tunnel through an HTTP proxy (RFC 9110 §9.3.6): TCP to the proxy, `CONNECT
/// host:port HTTP/1.1` with `Host` (and `Proxy-Authorization: Basic` with credentials), then the
/// proxy's answer head. On 2xx the socket is a byte pipe to the target, where the caller runs TLS
/// (SNI and certificate check for the target, not the proxy). The target's name is the proxy's
/// to resolve: no DNS lookup of it happens here.
enum ProxyTunnel {
    /// The longest answer head taken: proxies answer CONNECT in a few hundred bytes.
    static let headLimit = 16 * 1024

    /// Reactor thread only. `completion` runs later on the reactor thread, exactly once: with the
    /// tunnelled socket (not registered anywhere) or why not. `timeout` bounds the TCP connect and
    /// the proxy's answer together.
    static func open(through proxy: HTTPProxy, at address: SocketAddress, to target: Endpoint, timeout: Duration,
                     on reactor: Reactor, completion: @escaping (Result<Socket, ProxyError>) -> Void) {
        let label = proxy.endpoint.description
        let deadline = Reactor.monotonicNanoseconds() &+ Reactor.nanoseconds(timeout)
        Socket.connect(to: address, timeout: timeout, on: reactor) { result in
            switch result {
            case let .failure(error):
                completion(.failure(.cannotConnect(proxy: label, detail: detail(of: error))))
            case let .success(socket):
                let now = Reactor.monotonicNanoseconds()
                let left = Duration.nanoseconds(Int64(clamping: deadline > now ? deadline - now : 0))
                let exchange = ConnectExchange(socket: socket, request: request(for: target, proxy: proxy), proxy: proxy,
                                               target: target, timeout: timeout, reactor: reactor, completion: completion)
                exchange.begin(remaining: left)
            }
        }
    }

    /// The CONNECT request's bytes. It holds the credentials: never log it.
    static func request(for target: Endpoint, proxy: HTTPProxy) -> [UInt8] {
        var text = "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n"
        if let authorization = proxy.authorization { text += "Proxy-Authorization: \(authorization)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    private static func detail(of error: SocketError) -> String {
        switch error {
        case let .connectFailed(_, code): SocketError.text(code)
        case let .connectTimedOut(_, timeout): "no answer within \(SocketError.milliseconds(timeout)) ms"
        default: error.description
        }
    }

    /// What the proxy's answer so far says.
    enum Verdict: Equatable {
        /// Wait for more bytes.
        case incomplete
        /// 2xx: the socket is now the tunnel.
        case established
        case failed(ProxyError)
    }

    /// Judges the answer head received so far (`closed`: the proxy closed after it).
    static func judge(head bytes: [UInt8], closed: Bool, proxy: HTTPProxy, target: Endpoint) -> Verdict {
        let label = proxy.endpoint.description
        let prefix = Array("HTTP/1.".utf8)
        let seen = min(bytes.count, prefix.count)
        guard bytes[0..<seen].elementsEqual(prefix[0..<seen]) else {
            return .failed(.notHTTP(proxy: label, answer: shown(bytes)))
        }
        guard let end = headEnd(bytes) else {
            if closed { return .failed(.closedEarly(proxy: label)) }
            if bytes.count >= headLimit { return .failed(.answerTooLong(proxy: label, limit: headLimit)) }
            return .incomplete
        }
        let lineEnd = bytes.firstIndex(of: UInt8(ascii: "\r")) ?? end
        let statusLine = String(decoding: bytes[..<lineEnd], as: UTF8.self)
        let fields = statusLine.split(separator: " ", maxSplits: 2)
        guard fields.count >= 2, fields[1].count == 3, let status = Int(fields[1]) else {
            return .failed(.notHTTP(proxy: label, answer: shown(bytes)))
        }
        switch status {
        case 200..<300:
            // TLS speaks first from our side: nothing may follow the head yet.
            if end + 4 < bytes.count {
                return .failed(.notHTTP(proxy: label, answer: "data after its 2xx answer to CONNECT"))
            }
            return .established
        case 407, 401:
            // 407 is the standard answer; tinyproxy answers wrong credentials with 401.
            if let username = proxy.username {
                return .failed(.refusedCredentials(proxy: label, username: username, statusLine: statusLine))
            }
            return .failed(.wantsCredentials(proxy: label, statusLine: statusLine))
        default:
            return .failed(.refused(proxy: label, target: target.description, statusLine: statusLine))
        }
    }

    /// The index of the "\r\n\r\n" that ends the head.
    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// The start of an answer for a message: its first line quoted when printable, else hex bytes.
    static func shown(_ bytes: [UInt8]) -> String {
        let line = bytes.prefix { $0 != 13 && $0 != 10 }.prefix(80)
        if !line.isEmpty, line.allSatisfy({ (0x20..<0x7f).contains($0) }) {
            return "\"\(String(decoding: line, as: UTF8.self))\""
        }
        let hex = Array("0123456789abcdef")
        return "the bytes " + bytes.prefix(8).map { "\(hex[Int($0 >> 4)])\(hex[Int($0 & 15)])" }.joined(separator: " ")
    }
}

/// Writes one CONNECT request and reads the answer head, then hands the socket over and forgets it.
private final class ConnectExchange: ReactorHandler {
    private let socket: Socket
    private let request: [UInt8]
    private var written = 0
    private var head: [UInt8] = []
    private let proxy: HTTPProxy
    private let target: Endpoint
    private let timeout: Duration
    private let reactor: Reactor
    private var completion: ((Result<Socket, ProxyError>) -> Void)?
    private var timer: TimerID?

    init(socket: Socket, request: [UInt8], proxy: HTTPProxy, target: Endpoint, timeout: Duration, reactor: Reactor,
         completion: @escaping (Result<Socket, ProxyError>) -> Void) {
        self.socket = socket
        self.request = request
        self.proxy = proxy
        self.target = target
        self.timeout = timeout
        self.reactor = reactor
        self.completion = completion
    }

    func begin(remaining: Duration) {
        do {
            try reactor.register(socket.fd, interest: .writable, handler: self)
        } catch {
            socket.close()
            let failure = ProxyError.failed(proxy: proxy.endpoint.description, detail: error.description)
            let completion = self.completion
            self.completion = nil
            reactor.schedule(after: .zero) { completion?(.failure(failure)) }
            return
        }
        timer = reactor.schedule(after: remaining) { [self] in
            timer = nil
            finish(.failure(.timedOut(proxy: proxy.endpoint.description, timeout: timeout)))
        }
    }

    func onWritable() {
        guard completion != nil else { return }
        do {
            while written < request.count {
                let result = try request.withUnsafeBytes { bytes throws(SocketError) in
                    try socket.write(UnsafeRawBufferPointer(rebasing: bytes[written...]))
                }
                switch result {
                case let .transferred(count): written += count
                case .wouldBlock: return
                case .closed: return finish(.failure(.closedEarly(proxy: proxy.endpoint.description)))
                }
            }
        } catch {
            return finish(.failure(.failed(proxy: proxy.endpoint.description, detail: "\(error)")))
        }
        reactor.setInterest(.readable, for: socket.fd)
    }

    func onReadable() { receive() }
    func onHangup() { receive(hungUp: true) }

    func onReactorStop() {
        finish(.failure(.failed(proxy: proxy.endpoint.description, detail: "the transport stopped")))
    }

    private func receive(hungUp: Bool = false) {
        guard completion != nil else { return }
        var closed = false
        var chunk = [UInt8](repeating: 0, count: 4096)
        do {
            while head.count < ProxyTunnel.headLimit {
                let room = min(chunk.count, ProxyTunnel.headLimit - head.count)
                let result = try chunk.withUnsafeMutableBytes { bytes throws(SocketError) in
                    try socket.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[..<room]))
                }
                guard case let .transferred(count) = result else {
                    closed = result == .closed
                    break
                }
                head.append(contentsOf: chunk[..<count])
            }
        } catch {
            closed = true
        }
        guard !head.isEmpty else {
            if closed || hungUp { finish(.failure(.closedEarly(proxy: proxy.endpoint.description))) }
            return
        }
        switch ProxyTunnel.judge(head: head, closed: closed || hungUp, proxy: proxy, target: target) {
        case .incomplete: return
        case .established: finish(.success(socket))
        case let .failed(error): finish(.failure(error))
        }
    }

    private func finish(_ result: Result<Socket, ProxyError>) {
        guard let completion else { return }
        self.completion = nil
        if let timer { reactor.cancel(timer) }
        timer = nil
        reactor.deregister(socket.fd)
        if case .failure = result { socket.close() }
        completion(result)
    }
}
