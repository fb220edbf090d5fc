#if canImport(Glibc)
import Glibc
#endif
import Transport

/// Why a connection to an endpoint could not be opened, said so an operator can act on it: the
/// cause a warning names (once per endpoint and cause), that an `Unreachable` stop gives, and that
/// summary.json's `unreachable_endpoints` lists.
struct EndpointFailure: Sendable, Equatable {
    /// Tells causes apart for "once per endpoint and cause": the kind of failure, not the address
    /// tried nor the moment (every address of a name refusing is one cause).
    let kind: String
    /// What went wrong: "connection refused", "cannot resolve NAME: REASON", a TLS failure with what
    /// came back, ...
    let text: String
    /// A TLS or proxy failure that retrying cannot fix: an endpoint that never worked is dropped, or
    /// the run stops, with a message of its own.
    let isConfigurationError: Bool
}

extension EndpointFailure {
    /// A connection that ended before it was ready. `endpoint` is what the user named; the
    /// address tried is added when it differs (a name with several addresses).
    init(_ error: ClientConnectionError, endpoint: Endpoint) {
        isConfigurationError = error.isConfigurationError
        switch error {
        case .connect(.connectFailed(let address, let code)):
            kind = "connect \(code)"
            text = Self.systemText(code) + Self.via(address, endpoint)
        case .connect(.connectTimedOut(let address, let timeout)):
            kind = "connect timeout"
            text = "timed out: no answer to the TCP connect within \(timeout.components.seconds) s" + Self.via(address, endpoint)
        case .connect(.nameNotFound(let host, let reason)), .connect(.resolutionFailed(let host, let reason)):
            kind = "lookup \(reason)"
            text = "cannot resolve \(host): \(reason)"
        case .connect(let other):
            kind = "connect"
            text = other.description
        case .proxy(let proxy):
            kind = "proxy " + (Mirror(reflecting: proxy).children.first?.label ?? "")
            text = proxy.description
        case .tls(let tls):
            // The case's name: a refused certificate and a server speaking plain HTTP are two causes.
            kind = "tls " + (Mirror(reflecting: tls).children.first?.label ?? "")
            text = tls.description
        case .protocolError:
            kind = "http2"
            text = error.description
        case .peerClosed, .pingTimeout, .responseTimeout:
            kind = "closed"
            text = error.description + " before the connection was ready"
        }
    }

    /// A name that did not resolve.
    init(lookup: CampaignShared.LookupFailure) {
        kind = "lookup \(lookup.reason)"
        text = "cannot resolve \(lookup.host): \(lookup.reason)"
        isConfigurationError = false
    }

    /// "connection refused", as strerror says it, in lower case to run on in a sentence.
    private static func systemText(_ code: Int32) -> String {
        guard let message = strerror(code) else { return "connect failed (errno \(code))" }
        let text = String(cString: message)
        return text.prefix(1).lowercased() + text.dropFirst()
    }

    private static func via(_ address: String, _ endpoint: Endpoint) -> String {
        address == endpoint.description ? "" : " (\(address))"
    }
}

/// An endpoint the run never reached, and the last reason why (summary.json's
/// `unreachable_endpoints`, an `Unreachable` stop's message).
public struct UnreachableEndpoint: Sendable, Equatable {
    /// As `host:port`.
    public let endpoint: String
    /// The last failure's text, e.g. "connection refused".
    public let cause: String

    public init(endpoint: String, cause: String) {
        self.endpoint = endpoint
        self.cause = cause
    }
}
