/// A provider token: the JWT (JWS, ES256) that authenticates requests to APNs.
///
/// Header `{"alg":"ES256","kid":"<key id>"}`, claims `{"iss":"<team id>","iat":<epoch seconds>}`,
/// exactly so (this order, no spaces), each base64url without padding, signed with the P-256 key;
/// the signature is raw r‖s. APNs refuses a token whose `iat` is over an hour old, and a
/// connection whose token changes more often than every 20 minutes: `TokenSource` keeps to both.
///
/// `description` is safe to log; `jwt` and `authorization` are credentials and must never be logged.
public struct ProviderToken: Sendable, Equatable, CustomStringConvertible {
    /// APNs answers `ExpiredProviderToken` when `iat` is older than this (seconds).
    public static let maximumAge: Int64 = 60 * 60
    /// APNs answers `TooManyProviderTokenUpdates` when a connection's token changes to one whose
    /// `iat` is less than this many seconds after the previous token's (docs/apns.md).
    public static let minimumUpdateInterval: Int64 = 20 * 60

    /// The token itself: `header.claims.signature`.
    public let jwt: String
    /// The `iat` claim, in seconds since 1970.
    public let issuedAt: Int64
    /// The signing key's id: the token header's `kid`.
    public let keyID: KeyID
    /// The team the key belongs to: the claims' `iss`.
    public let teamID: TeamID
    /// The value of the `authorization` request header, `bearer <jwt>`, as bytes ready for HPACK,
    /// built once so sending a request allocates nothing for it.
    public let authorization: [UInt8]

    /// Signs a new token with `signingKey`.
    public init(signingKey: SigningKey, keyID: KeyID, teamID: TeamID, issuedAt: Int64) throws(SigningKeyError) {
        let header = Base64URL.encode(Array("{\"alg\":\"ES256\",\"kid\":\"\(keyID.value)\"}".utf8))
        let claims = Base64URL.encode(Array("{\"iss\":\"\(teamID.value)\",\"iat\":\(issuedAt)}".utf8))
        let signingInput = header + "." + claims
        let signature = try signingKey.signES256(Array(signingInput.utf8))
        jwt = signingInput + "." + Base64URL.encode(signature)
        self.issuedAt = issuedAt
        self.keyID = keyID
        self.teamID = teamID
        authorization = Array("bearer \(jwt)".utf8)
    }

    /// Kid, team, iat and the last 6 characters of the signature (enough to tell tokens apart
    /// in a log, useless for forging one).
    public var description: String {
        "ProviderToken(kid: \(keyID), iss: \(teamID), iat: \(issuedAt), sig: …\(jwt.suffix(6)))"
    }

    /// Two tokens are the same when their text is; signatures are randomized, so two tokens signed
    /// in the same second still differ.
    public static func == (lhs: ProviderToken, rhs: ProviderToken) -> Bool { lhs.jwt == rhs.jwt }
}
