import Glibc

/// The hosts reached directly although a proxy is set: `NO_PROXY`/`no_proxy` or `--noproxy`, read
/// as curl reads it. A comma (or space) separated list of
/// - `*` alone: every host;
/// - a name: that host and every host under it (`example.com` and `.example.com` both match
///   `example.com` and `api.example.com`, never `notexample.com`), without regard to case or a
///   trailing dot;
/// - an IP address, or a CIDR block (`10.0.0.0/8`, `fd00::/8`), matching IP literal hosts only
///   (names are not resolved to decide); IPv6 without brackets;
/// - any of these with `:PORT` (not in curl, which ignores ports): the entry then matches that
///   port only. Without one an entry matches every port.
public struct ProxyBypass: Sendable, Hashable {
    enum Entry: Sendable, Hashable {
        case everything
        case name(String, port: UInt16?)
        case network([UInt8], bits: Int, port: UInt16?)
    }

    let entries: [Entry]

    /// The list as `NO_PROXY` holds it; an empty list bypasses nothing.
    public init(list: String) {
        var entries: [Entry] = []
        for token in list.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            if let entry = Self.entry(String(token)) { entries.append(entry) }
        }
        self.entries = entries
    }

    /// Nothing is bypassed.
    public static let none = ProxyBypass(list: "")

    /// `*`: no host uses the proxy.
    public var bypassesEverything: Bool { entries.contains(.everything) }

    /// Whether `endpoint` is reached directly.
    public func matches(_ endpoint: Endpoint) -> Bool {
        var host = endpoint.host.lowercased()
        if host.hasSuffix(".") { host.removeLast() }
        let address = Self.addressBytes(host)
        for entry in entries {
            switch entry {
            case .everything:
                return true
            case let .name(name, port):
                guard address == nil, port == nil || port == endpoint.port else { continue }
                if host == name || host.hasSuffix("." + name) { return true }
            case let .network(network, bits, port):
                guard let address, address.count == network.count, port == nil || port == endpoint.port else { continue }
                if Self.prefixMatches(address, network, bits: bits) { return true }
            }
        }
        return false
    }

    private static func entry(_ token: String) -> Entry? {
        if token == "*" { return .everything }
        var text = Substring(token.lowercased())
        var port: UInt16?
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            // [::1]:443 or [::1]
            let after = text[text.index(after: close)...]
            if after.hasPrefix(":") { port = UInt16(after.dropFirst()) }
            text = text[text.index(after: text.startIndex)..<close]
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            // name:port or v4:port; a lone colon cannot be IPv6.
            guard let value = UInt16(text[text.index(after: colon)...]) else { return nil }
            port = value
            text = text[..<colon]
        }
        var bits: Int?
        if let slash = text.firstIndex(of: "/") {
            bits = Int(text[text.index(after: slash)...])
            text = text[..<slash]
            guard bits != nil else { return nil }
        }
        if let address = addressBytes(String(text)) {
            let width = address.count * 8
            return .network(address, bits: min(max(bits ?? width, 0), width), port: port)
        }
        guard bits == nil else { return nil }
        while text.hasPrefix(".") { text = text.dropFirst() }
        while text.hasSuffix(".") { text = text.dropLast() }
        return text.isEmpty ? nil : .name(String(text), port: port)
    }

    /// The address's bytes (4 or 16) when `text` is an IP literal.
    static func addressBytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }

    private static func prefixMatches(_ address: [UInt8], _ network: [UInt8], bits: Int) -> Bool {
        var remaining = bits
        for index in 0..<address.count where remaining > 0 {
            let take = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - take))
            if address[index] & mask != network[index] & mask { return false }
            remaining -= take
        }
        return true
    }
}
