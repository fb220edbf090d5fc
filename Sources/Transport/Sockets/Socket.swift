import Glibc
import Synchronization

/// What a non-blocking read or write did.
public enum SocketIO: Sendable, Equatable {
    /// This many bytes moved (always > 0).
    case transferred(Int)
    /// Nothing moved; wait for the reactor to report the socket ready.
    case wouldBlock
    /// The peer closed its side (a read returned end of file).
    case closed
}

/// A non-blocking TCP socket that owns its descriptor and closes it in `close()` or `deinit`.
///
/// A socket may be handed from one thread to another (a listener accepting for several reactors),
/// but is used by one thread at a time: the reactor it is registered on. Deregister it from that
/// reactor before closing it. Sendable: the descriptor is an atomic, so a close is seen everywhere.
public final class Socket: Sendable {
    private let descriptor: Atomic<Int32>

    /// The descriptor, for `Reactor.register`; -1 once closed. The socket still owns it.
    public var fd: Int32 { descriptor.load(ordering: .relaxed) }

    /// Takes ownership of an open descriptor and makes it non-blocking.
    init(adopting fd: Int32) {
        descriptor = Atomic(fd)
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0, flags & O_NONBLOCK == 0 { _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
    }

    deinit { close() }

    /// Closes the descriptor; later calls do nothing.
    public func close() {
        let fd = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
        if fd >= 0 { _ = Glibc.close(fd) }
    }

    /// The descriptor was closed (by `close()` or the owner).
    public var isClosed: Bool { fd < 0 }

    // MARK: Listening

    /// A listening socket on `address` (port 0: the kernel picks one; read it from `localAddress`).
    public static func listen(on address: SocketAddress, backlog: Int32 = 1024) throws(SocketError) -> Socket {
        let fd = Glibc.socket(address.addressFamily, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                              | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SocketError.system(call: "socket", errno: errno) }
        let socket = Socket(adopting: fd)
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = address.withSockAddr { Glibc.bind(fd, $0, $1) }
        guard bound == 0 else { throw SocketError.listenFailed(address: address.description, errno: errno) }
        guard Glibc.listen(fd, backlog) == 0 else {
            throw SocketError.listenFailed(address: address.description, errno: errno)
        }
        return socket
    }

    /// The next pending connection (non-blocking, TCP_NODELAY set), or nil when none is waiting.
    /// Call it in a loop from `onReadable` of the listening socket until it returns nil.
    public func accept() throws(SocketError) -> Socket? {
        while true {
            // accept4 is a GNU extension Swift's Glibc module hides; two fcntls cost nothing here.
            let accepted = Glibc.accept(fd, nil, nil)
            if accepted >= 0 {
                _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)
                let socket = Socket(adopting: accepted)
                try? socket.setNoDelay()
                return socket
            }
            switch errno {
            case EAGAIN, EWOULDBLOCK: return nil
            case EINTR, ECONNABORTED, EPROTO: continue
            case let code: throw SocketError.system(call: "accept", errno: code)
            }
        }
    }

    /// The address this socket is bound to (a listener's port after listening on port 0).
    public func localAddress() throws(SocketError) -> SocketAddress {
        try address(call: "getsockname", getsockname)
    }

    /// The address of the connected peer.
    public func peerAddress() throws(SocketError) -> SocketAddress {
        try address(call: "getpeername", getpeername)
    }

    private func address(call: String, _ get: (Int32, UnsafeMutablePointer<sockaddr>,
                                               UnsafeMutablePointer<socklen_t>) -> Int32) throws(SocketError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result: SocketAddress? = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                get(fd, pointer, &length) == 0 ? SocketAddress(UnsafePointer(pointer)) : nil
            }
        }
        guard let result else { throw SocketError.system(call: call, errno: errno) }
        return result
    }

    // MARK: Reading and writing

    /// One non-blocking read: bytes read, `wouldBlock`, or `closed` at the end of the stream.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SocketError) -> SocketIO {
        while true {
            let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if count > 0 { return .transferred(count) }
            if count == 0 { return buffer.isEmpty ? .wouldBlock : .closed }
            switch errno {
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case EINTR: continue
            case let code: throw SocketError.system(call: "read", errno: code)
            }
        }
    }

    /// One non-blocking write: bytes written (maybe fewer than given), or `wouldBlock`.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(SocketError) -> SocketIO {
        while true {
            let count = Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if count > 0 { return .transferred(count) }
            if count == 0 { return .wouldBlock }
            switch errno {
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case EINTR: continue
            case EPIPE, ECONNRESET: return .closed
            case let code: throw SocketError.system(call: "send", errno: code)
            }
        }
    }

    // MARK: Options

    /// Sends small writes at once (HTTP/2 frames are already batched above this layer).
    public func setNoDelay(_ enabled: Bool = true) throws(SocketError) {
        var value: Int32 = enabled ? 1 : 0
        guard setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw SocketError.system(call: "setsockopt(TCP_NODELAY)", errno: errno)
        }
    }

    /// Kernel buffer sizes in bytes; nil leaves one as the kernel tunes it.
    public func setBufferSizes(send: Int32? = nil, receive: Int32? = nil) throws(SocketError) {
        for (option, size) in [(SO_SNDBUF, send), (SO_RCVBUF, receive)] {
            guard var size else { continue }
            guard setsockopt(fd, SOL_SOCKET, option, &size, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                throw SocketError.system(call: "setsockopt(SO_SNDBUF/SO_RCVBUF)", errno: errno)
            }
        }
    }

    /// The socket's pending error (SO_ERROR), 0 when none: how a non-blocking connect reports.
    public func pendingError() -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) == 0 else { return errno }
        return value
    }
}
