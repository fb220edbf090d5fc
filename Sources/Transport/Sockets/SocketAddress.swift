import Glibc

/// One IPv4 or IPv6 address and a TCP port: what a name resolves to and what a socket connects to.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// IPv4 or IPv6: decides the socket's domain and how the address is written.
    public enum Family: Sendable, Hashable {
        case ipv4
        case ipv6
    }

    /// Which kind of address `ip` is.
    public let family: Family
    /// The address in its canonical text form ("127.0.0.1", "::1").
    public let ip: String
    /// The TCP port.
    public let port: UInt16

    /// nil unless `ip` is an IPv4 or IPv6 address literal (no brackets, no zone).
    public init?(ip: String, port: UInt16) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, ip, &v4) == 1 {
            self.init(v4, port: port)
        } else if inet_pton(AF_INET6, ip, &v6) == 1 {
            self.init(v6, port: port)
        } else {
            return nil
        }
    }

    /// 127.0.0.1 on `port` (0: let the kernel choose when listening).
    public static func loopback(port: UInt16 = 0) -> SocketAddress {
        var address = in_addr()
        address.s_addr = UInt32(0x7f00_0001).bigEndian
        return SocketAddress(address, port: port)
    }

    /// "127.0.0.1:443" or "[::1]:443".
    public var description: String {
        family == .ipv6 ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }

    init(_ address: in_addr, port: UInt16) {
        var address = address
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
        family = .ipv4
        ip = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        self.port = port
    }

    init(_ address: in6_addr, port: UInt16) {
        var address = address
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
        family = .ipv6
        ip = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        self.port = port
    }

    /// Reads a sockaddr_in / sockaddr_in6; nil for other families.
    init?(_ pointer: UnsafePointer<sockaddr>) {
        switch Int32(pointer.pointee.sa_family) {
        case AF_INET:
            let v4 = UnsafeRawPointer(pointer).loadUnaligned(as: sockaddr_in.self)
            self.init(v4.sin_addr, port: UInt16(bigEndian: v4.sin_port))
        case AF_INET6:
            let v6 = UnsafeRawPointer(pointer).loadUnaligned(as: sockaddr_in6.self)
            self.init(v6.sin6_addr, port: UInt16(bigEndian: v6.sin6_port))
        default:
            return nil
        }
    }

    var addressFamily: Int32 { family == .ipv4 ? AF_INET : AF_INET6 }

    /// Calls `body` with this address as a sockaddr and its length.
    func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        switch family {
        case .ipv4:
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            inet_pton(AF_INET, ip, &address.sin_addr)
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .ipv6:
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            inet_pton(AF_INET6, ip, &address.sin6_addr)
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
    }
}
