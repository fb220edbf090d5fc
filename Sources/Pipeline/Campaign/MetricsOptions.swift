import APNs

/// Where a run's Prometheus metrics go (`--metrics-out`, `--pushgateway`), decided before
/// anything is sent.
public struct MetricsOptions: Sendable {
    /// `--metrics-out`: a `.prom` file for node_exporter's textfile collector, replaced atomically.
    public var textfilePath: String?
    /// `--pushgateway`: the Pushgateway to push to during and at the end of the run.
    public var pushgateway: PushgatewayTarget?
    /// `--metrics-job`: the Pushgateway's `job` grouping label.
    public var job = "apns_bulk"
    /// `--metrics-instance`: the `instance` grouping label; the host name by default.
    public var instance: String
    /// The `shard` grouping label (and, in the textfile, a label on every series), when the run
    /// is one shard of a campaign; nil otherwise.
    public var shard: String?
    /// `--metrics-interval`: seconds between rewrites and pushes during the run.
    public var intervalSeconds = 5.0

    public init(instance: String) { self.instance = instance }

    /// The Pushgateway path of this run's group: `/metrics/job/<job>/instance/<i>[/shard/<s>]`,
    /// each value base64url-encoded (`label@base64`) when it holds anything but [A-Za-z0-9._-].
    package var groupingPath: String {
        var path = "/metrics"
        for (name, value) in [("job", job), ("instance", instance)] + (shard.map { [("shard", $0)] } ?? []) {
            let plain = !value.isEmpty && value.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte == 0x2E
                    || byte == 0x5F || byte == 0x2D
            }
            path += plain ? "/\(name)/\(value)" : "/\(name)@base64/\(value.isEmpty ? "=" : Base64URL.encode(Array(value.utf8)))"
        }
        return path
    }
}

/// A Pushgateway's address, from `http://HOST[:PORT][/PREFIX]` (https is not spoken).
public struct PushgatewayTarget: Sendable, Equatable {
    public var host: String
    public var port: Int
    /// A path the Pushgateway is served under (its `--web.route-prefix`), without the trailing slash.
    public var pathPrefix: String

    public init(host: String, port: Int, pathPrefix: String = "") {
        self.host = host
        self.port = port
        self.pathPrefix = pathPrefix
    }

    /// Parses `url`; the error says what is wrong, for a message naming the flag.
    public init(parsing url: String) throws(PushgatewayTargetError) {
        guard url.hasPrefix("http://") else {
            throw url.hasPrefix("https://")
                ? PushgatewayTargetError(detail: "https is not supported; give an http:// URL (a Pushgateway on this host or network)")
                : PushgatewayTargetError(detail: "not an http:// URL; give e.g. http://127.0.0.1:9091")
        }
        let rest = url.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" }
        var prefix = String(rest.dropFirst(authority.count))
        while prefix.hasSuffix("/") { prefix.removeLast() }
        var host = String(authority)
        var port = 80
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw PushgatewayTargetError(detail: "an IPv6 address needs its closing ]") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { port = try Self.port(after.dropFirst()) } else if !after.isEmpty {
                throw PushgatewayTargetError(detail: "unexpected text after the IPv6 address")
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            port = try Self.port(authority[authority.index(after: colon)...])
        }
        guard !host.isEmpty, !host.contains("@") else {
            throw PushgatewayTargetError(detail: "no host (or credentials in the URL, which are not supported)")
        }
        self.host = host
        self.port = port
        pathPrefix = prefix
    }

    private static func port(_ text: Substring) throws(PushgatewayTargetError) -> Int {
        guard let port = Int(text), (1...65535).contains(port) else {
            throw PushgatewayTargetError(detail: "the port \(text) is not a number from 1 to 65535")
        }
        return port
    }

    /// `host:port`, as the Host header and messages name it.
    package var authority: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// What is wrong with a `--pushgateway` URL.
public struct PushgatewayTargetError: Error, Sendable {
    public var detail: String
}
