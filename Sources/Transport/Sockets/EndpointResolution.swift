import Glibc

extension Endpoint {
    /// Resolves the host afresh (no caching: APNs rotates its addresses) on a one-shot thread,
    /// because getaddrinfo blocks, and delivers every address on `reactor`'s thread, in the
    /// resolver's order without duplicates, so a pool can spread its connections across them.
    ///
    /// Call it on the reactor thread; `completion` runs later on that thread. If the reactor stops
    /// first, the completion is dropped.
    public func resolve(on reactor: Reactor,
                        completion: @escaping (Result<[SocketAddress], SocketError>) -> Void) {
        let bound = ThreadBound(completion)
        let endpoint = self
        do {
            _ = try ReactorThread.spawn(name: "resolve", detached: true) {
                let result = Result { () throws(SocketError) in try endpoint.resolveBlocking() }
                reactor.execute { bound.value(result) }
            }
        } catch {
            reactor.schedule(after: .zero) { completion(.failure(error)) }
        }
    }

    /// Resolves the host on the calling thread. It blocks (DNS): never call it on a reactor thread.
    public func resolveBlocking() throws(SocketError) -> [SocketAddress] {
        if let literal = SocketAddress(ip: host, port: port) { return [literal] }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0 else {
            let reason = status == EAI_SYSTEM ? SocketError.text(errno) : String(cString: gai_strerror(status))
            // EAI_NONAME, EAI_NODATA (-5, a GNU extension Glibc's module leaves out):
            // the resolver's definite answer. EAI_AGAIN, EAI_FAIL (a SERVFAIL) and the rest may pass.
            if status == EAI_NONAME || status == -5 {
                throw SocketError.nameNotFound(host: host, reason: reason)
            }
            throw SocketError.resolutionFailed(host: host, reason: reason)
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var node = list
        while let current = node {
            if let sockaddr = current.pointee.ai_addr, let address = SocketAddress(UnsafePointer(sockaddr)),
               !addresses.contains(address) {
                addresses.append(address)
            }
            node = current.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            throw SocketError.nameNotFound(host: host, reason: "the name has no IPv4 or IPv6 address")
        }
        return addresses
    }
}
