/// An HTTP proxy that opens tunnels with `CONNECT` (`--proxy http://[user:pass@]host:port`, or
/// `HTTPS_PROXY`): corporate networks let HTTPS out only this way. TLS and HTTP/2 run inside the
/// tunnel, end to end with APNs, so the proxy sees neither the notifications nor the credentials.
///
/// The password is kept for the `Proxy-Authorization` header only: `description` masks it, so a
/// proxy can be printed in any message.
public struct HTTPProxy: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The proxy's host (resolved afresh for every connection) and port.
    public let endpoint: Endpoint
    /// The user name for Basic authentication, percent-decoded; nil without credentials.
    public let username: String?
    /// Percent-decoded; only `authorization` reads it.
    private let password: String?

    /// A proxy without credentials.
    public init(endpoint: Endpoint, username: String? = nil, password: String? = nil) {
        self.endpoint = endpoint
        self.username = username
        self.password = username == nil ? nil : (password ?? "")
    }

    /// Parses `http://[user[:password]@]host:port[/]`, or `host:port` with no scheme (curl reads it
    /// as http://). The port is required: proxies listen on no port that could be assumed (3128,
    /// 8080, 80...). User and password are percent-decoded (`%40` for `@`, `%3A` for `:`).
    public init(parsing text: String) throws(HTTPProxyError) {
        var rest = Substring(text)
        if let scheme = rest.firstRange(of: "://") {
            let name = rest[..<scheme.lowerBound].lowercased()
            guard name == "http" else {
                throw HTTPProxyError(text: text, reason: name == "https"
                    ? "a proxy spoken to over TLS (https://) is not supported; give its plain http:// address (the tunnel to APNs is TLS all the same)"
                    : "the scheme '\(name)://' is not supported; give http://HOST:PORT (a CONNECT proxy)")
            }
            rest = rest[scheme.upperBound...]
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        if rest.contains("/") || rest.contains("?") || rest.contains("#") {
            throw HTTPProxyError(text: text, reason: "give http://HOST:PORT with no path")
        }
        var username: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let parts = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let user = Self.percentDecoded(parts[0]), !user.isEmpty else {
                throw HTTPProxyError(text: text, reason: "the user name before '@' is empty or has a bad %-escape")
            }
            username = user
            if parts.count == 2 {
                guard let decoded = Self.percentDecoded(parts[1]) else {
                    throw HTTPProxyError(text: text, reason: "the password has a bad %-escape (write %25 for a '%')")
                }
                password = decoded
            }
        }
        let hostPort = String(rest)
        let hasPort = hostPort.hasPrefix("[") ? hostPort.contains("]:") : hostPort.contains(":")
        guard hasPort else {
            throw HTTPProxyError(text: text, reason: "the port is missing; give http://HOST:PORT, e.g. http://proxy.example.com:3128")
        }
        let endpoint: Endpoint
        do {
            endpoint = try Endpoint(parsing: hostPort)
        } catch {
            throw HTTPProxyError(text: text, reason: "'\(hostPort)': \(error.reason)")
        }
        self.init(endpoint: endpoint, username: username, password: password)
    }

    /// `Basic base64(user:password)` for `Proxy-Authorization`, or nil without credentials.
    /// Never log it: it is the password in clear.
    var authorization: String? {
        guard let username else { return nil }
        return "Basic " + Self.base64(Array("\(username):\(password ?? "")".utf8))
    }

    /// "http://host:port", or "http://user:***@host:port": the password never shows.
    public var description: String {
        guard let username else { return "http://\(endpoint)" }
        return "http://\(username):***@\(endpoint)"
    }

    /// The same as `description`, so that no way of printing a proxy shows its password.
    public var debugDescription: String { description }

    /// Without the password, for `dump` and the default printing of the values that hold a proxy.
    public var customMirror: Mirror {
        Mirror(self, children: ["endpoint": endpoint, "username": username as Any], displayStyle: .struct)
    }

    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Standard base64 with padding (RFC 4648 §4), as Basic authentication wants it.
    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group = UInt32(bytes[index]) << 16
            if count > 1 { group |= UInt32(bytes[index + 1]) << 8 }
            if count > 2 { group |= UInt32(bytes[index + 2]) }
            for position in 0..<4 {
                if position <= count {
                    out.append(alphabet[Int(group >> UInt32(18 - 6 * position) & 63)])
                } else {
                    out.append(UInt8(ascii: "="))
                }
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// A `--proxy` value (or `HTTPS_PROXY`) that is not `http://[user:pass@]host:port`. Its text
/// never repeats the value as given: that may hold a password.
public struct HTTPProxyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The value, its password masked.
    public let text: String
    /// What is wrong with it.
    public let reason: String

    init(text: String, reason: String) {
        self.text = HTTPProxyError.masked(text)
        self.reason = reason
    }

    /// "invalid proxy 'http://u:***@host': the port is missing; ...".
    public var description: String { "invalid proxy '\(text)': \(reason)" }

    /// `text` with whatever lies between the user name's ':' and the last '@' replaced by ***.
    static func masked(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        let start = text.firstRange(of: "://")?.upperBound ?? text.startIndex
        guard start <= at, let colon = text[start..<at].firstIndex(of: ":") else { return text }
        return String(text[...colon]) + "***" + String(text[at...])
    }
}
