import Glibc

/// A server to connect to, by name or address literal, and its port.
public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
    /// A DNS name or an IP literal, without brackets ("api.push.apple.com", "127.0.0.1", "::1").
    public let host: String
    /// The TCP port (443 for APNs).
    public let port: UInt16

    /// APNs' production service.
    public static let production = Endpoint(host: "api.push.apple.com", port: 443)
    /// APNs' development service, for apps signed for development.
    public static let sandbox = Endpoint(host: "api.sandbox.push.apple.com", port: 443)

    /// An endpoint; `host` is not resolved until a connection is made.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `production`, `sandbox`, `HOST:PORT`, `[IPv6]:PORT`; the port defaults to 443 when
    /// left out (`HOST`, `[IPv6]`).
    public init(parsing text: String) throws(EndpointError) {
        let trimmed = text.trimmingWhitespace()
        switch trimmed {
        case "production": self = .production; return
        case "sandbox": self = .sandbox; return
        case "": throw EndpointError(text: text, reason: "it is empty")
        default: break
        }
        if let scheme = trimmed.firstRange(of: "://") {
            // A URL where HOST:PORT is wanted: say so, rather than that an IPv6 address needs brackets.
            let rest = trimmed[scheme.upperBound...]
            let authority = rest.prefix { $0 != "/" }
            let example = authority.isEmpty ? "api.push.apple.com:443" : String(authority)
            throw EndpointError(text: text, reason: "give HOST:PORT with no scheme or path, e.g. \(example) "
                                + "(apns-bulk always speaks HTTPS with HTTP/2)")
        }
        var host: Substring
        var portText: Substring?
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]") else {
                throw EndpointError(text: text, reason: "the '[' of an IPv6 address is never closed")
            }
            host = trimmed[trimmed.index(after: trimmed.startIndex)..<close]
            let rest = trimmed[trimmed.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else {
                    throw EndpointError(text: text, reason: "expected ':PORT' after ']'")
                }
                portText = rest.dropFirst()
            }
            guard SocketAddress(ip: String(host), port: 0)?.family == .ipv6 else {
                throw EndpointError(text: text, reason: "'\(host)' in brackets is not an IPv6 address")
            }
        } else {
            let parts = trimmed.split(separator: ":", omittingEmptySubsequences: false)
            switch parts.count {
            case 1: host = parts[0]
            case 2: host = parts[0]; portText = parts[1]
            default:
                throw EndpointError(text: text, reason: "an IPv6 address goes in brackets, e.g. [::1]:443")
            }
            guard !host.isEmpty else { throw EndpointError(text: text, reason: "the host is missing") }
            guard host.utf8.allSatisfy(Endpoint.isHostByte) else {
                throw EndpointError(text: text, reason: "'\(host)' is not a host name or IP address")
            }
        }
        var port: UInt16 = 443
        if let portText {
            guard !portText.isEmpty, portText.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
                  let value = UInt16(portText), value > 0 else {
                throw EndpointError(text: text, reason: "the port must be a number from 1 to 65535")
            }
            port = value
        }
        self.init(host: String(host), port: port)
    }

    /// True when `host` is an IP literal: no DNS, no SNI, and the certificate is checked for the IP.
    public var isIPAddress: Bool { SocketAddress(ip: host, port: port) != nil }

    /// "host:port", with brackets around an IPv6 literal.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}

/// An `--endpoint` value that is not `production`, `sandbox`, `HOST:PORT` or `[IPv6]:PORT`.
public struct EndpointError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The value as given.
    public let text: String
    /// What is wrong with it.
    public let reason: String

    /// One line for the command line's error message.
    public var description: String {
        "invalid endpoint '\(text)': \(reason) (use production, sandbox, HOST:PORT or [IPv6]:PORT)"
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }),
              let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return self[first...last]
    }
}
