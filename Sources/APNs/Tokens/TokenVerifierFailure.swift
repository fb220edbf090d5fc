/// Why a provider token is refused, and the APNs reason (403) that says so.
public enum TokenVerificationFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not three base64url parts, or a part is not the JSON object it should be.
    case malformed(String)
    /// The header's `alg` is not ES256.
    case unsupportedAlgorithm(String)
    /// The header's `kid` is not the expected key id.
    case wrongKeyID(String)
    /// The claims' `iss` is not the expected team id.
    case wrongTeam(String)
    /// The signature is not the expected key's signature of header and claims.
    case badSignature
    /// `iat` is more than `ProviderToken.maximumAge` seconds before now.
    case expired(issuedAt: Int64, ageSeconds: Int64)

    /// The `reason` APNs answers with (status 403).
    public var reason: String {
        switch self {
        case .expired: "ExpiredProviderToken"
        default: "InvalidProviderToken"
        }
    }

    /// Why the token was refused, for the mock's log; never the token itself.
    public var description: String {
        switch self {
        case .malformed(let detail): "malformed provider token: \(detail)"
        case .unsupportedAlgorithm(let alg): "provider token algorithm \"\(alg)\" is not ES256"
        case .wrongKeyID(let kid): "provider token key id \"\(kid)\" is not the expected one"
        case .wrongTeam(let iss): "provider token team id \"\(iss)\" is not the expected one"
        case .badSignature: "provider token signature does not verify"
        case .expired(let iat, let age): "provider token issued at \(iat) is \(age) s old (limit \(ProviderToken.maximumAge) s)"
        }
    }
}
