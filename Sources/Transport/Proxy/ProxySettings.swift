/// Which proxy a run uses and which hosts bypass it, decided once before anything is sent, the
/// way curl decides it:
/// - `--proxy URL` wins over the environment; `--proxy ''` means no proxy at all;
/// - otherwise `https_proxy`, then `HTTPS_PROXY` (the lower-case name wins when both are set;
///   an empty value counts as unset);
/// - `--noproxy LIST` wins over `no_proxy`, then `NO_PROXY` (lower case first again);
///   `--noproxy ''` bypasses nothing even when `NO_PROXY` is set. The list applies to a
///   `--proxy` too.
public struct ProxySettings: Sendable, Hashable {
    /// The proxy, or nil: every connection goes direct.
    public var proxy: HTTPProxy?
    /// Hosts reached directly anyway.
    public var bypass: ProxyBypass
    /// Where `proxy` came from ("--proxy", "https_proxy", "HTTPS_PROXY"), for messages.
    public var source: String?

    /// No proxy: every connection direct.
    public static let direct = ProxySettings(proxy: nil, bypass: .none, source: nil)

    /// A proxy (or none) and the hosts that bypass it.
    public init(proxy: HTTPProxy?, bypass: ProxyBypass, source: String?) {
        self.proxy = proxy
        self.bypass = bypass
        self.source = source
    }

    /// The settings from the flags (nil: not given) and the environment. Throws naming the flag or
    /// variable whose value is not a usable proxy URL (its password masked).
    public init(proxyFlag: String?, noProxyFlag: String?, environment: [String: String]) throws(ProxySettingsError) {
        var text: String?
        var source: String?
        if let proxyFlag {
            text = proxyFlag.isEmpty ? nil : proxyFlag
            source = "--proxy"
        } else if let (name, value) = Self.first(["https_proxy", "HTTPS_PROXY"], in: environment) {
            text = value
            source = name
        }
        var proxy: HTTPProxy?
        if let text, let source {
            do {
                proxy = try HTTPProxy(parsing: text)
            } catch {
                throw ProxySettingsError(source: source, error: error)
            }
        }
        let list = noProxyFlag ?? Self.first(["no_proxy", "NO_PROXY"], in: environment)?.1 ?? ""
        self.init(proxy: proxy, bypass: ProxyBypass(list: list), source: proxy == nil ? nil : source)
    }

    /// The proxy a connection to `endpoint` goes through; nil: direct.
    public func proxy(for endpoint: Endpoint) -> HTTPProxy? {
        guard let proxy, !bypass.matches(endpoint) else { return nil }
        return proxy
    }

    private static func first(_ names: [String], in environment: [String: String]) -> (String, String)? {
        for name in names {
            if let value = environment[name], !value.isEmpty { return (name, value) }
        }
        return nil
    }
}

/// A proxy URL from a flag or an environment variable that cannot be used.
public struct ProxySettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// "--proxy", "https_proxy" or "HTTPS_PROXY".
    public let source: String
    /// What is wrong with the value.
    public let error: HTTPProxyError

    /// "--proxy: invalid proxy 'http://host': the port is missing; ...", and for a variable how to
    /// go on without it.
    public var description: String {
        if source.hasPrefix("--") { return "\(source) \(error.text): \(error.reason)" }
        return "the environment variable \(source)='\(error.text)': \(error.reason). Fix or unset it, "
            + "or give --proxy URL (or --proxy '' to connect directly)"
    }
}
