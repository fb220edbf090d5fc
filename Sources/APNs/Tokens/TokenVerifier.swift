import Foundation

/// Checks provider tokens the way APNs does: the server side of `ProviderToken`.
///
/// `verify` checks what never changes for a given token (structure, algorithm, key id, team,
/// signature) and returns its `iat`, so a server can cache the answer per distinct token;
/// `checkAge` checks what does change (the token's age) on every request.
/// Thread-safe; verification is serialized inside (see `ES256PublicKey`).
public struct TokenVerifier: Sendable {
    /// The only key id a token may name.
    public let keyID: ProviderToken.KeyID
    /// The only team a token may name.
    public let teamID: ProviderToken.TeamID
    private let publicKey: ES256PublicKey

    /// Verifies tokens signed by the P-256 key whose public half is `publicKeyPEM`
    /// ("BEGIN PUBLIC KEY"), for `keyID` of team `teamID`.
    public init(publicKeyPEM: String, keyID: ProviderToken.KeyID, teamID: ProviderToken.TeamID) throws(SigningKeyError) {
        publicKey = try ES256PublicKey(pem: publicKeyPEM, source: "the verifier's public key")
        self.keyID = keyID
        self.teamID = teamID
    }

    /// Verifies tokens signed by `signingKey`.
    public init(signingKey: SigningKey, keyID: ProviderToken.KeyID, teamID: ProviderToken.TeamID) throws(SigningKeyError) {
        try self.init(publicKeyPEM: try signingKey.publicKeyPEM(), keyID: keyID, teamID: teamID)
    }

    /// The token's `iat` when `jwt` is a well-formed ES256 token of this key and team with a valid
    /// signature; its age is not checked here (see `checkAge`).
    public func verify(_ jwt: some StringProtocol) throws(TokenVerificationFailure) -> Int64 {
        let parts = jwt.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw .malformed("expected 3 dot-separated parts, found \(parts.count)")
        }
        guard let headerBytes = Base64URL.decode(utf8: parts[0]),
              let claimsBytes = Base64URL.decode(utf8: parts[1]),
              let signature = Base64URL.decode(utf8: parts[2]) else {
            throw .malformed("a part is not unpadded base64url")
        }
        let header: Header = try decode(headerBytes, part: "header")
        guard header.alg == "ES256" else { throw .unsupportedAlgorithm(header.alg) }
        guard let kid = header.kid else { throw .malformed("header has no kid") }
        guard kid == keyID.value else { throw .wrongKeyID(kid) }

        guard signature.count == ES256Signature.rawLength else {
            throw .malformed("signature is \(signature.count) bytes, ES256 needs 64 (raw r‖s)")
        }
        let signingInput = jwt.utf8[parts[0].startIndex..<parts[1].endIndex]
        guard publicKey.verify(signature: signature, of: signingInput) else { throw .badSignature }

        let claims: Claims = try decode(claimsBytes, part: "claims")
        guard let iss = claims.iss else { throw .malformed("claims have no iss") }
        guard iss == teamID.value else { throw .wrongTeam(iss) }
        guard let iat = claims.iat else { throw .malformed("claims have no integer iat") }
        return iat
    }

    /// Throws `.expired` when a token issued at `issuedAt` is older than APNs allows at `now`
    /// (both in seconds since 1970). A token from the future is not refused: clocks differ.
    public static func checkAge(issuedAt: Int64, now: Int64) throws(TokenVerificationFailure) {
        let age = now - issuedAt
        if age > ProviderToken.maximumAge { throw .expired(issuedAt: issuedAt, ageSeconds: age) }
    }

    /// Whether a connection that switches to a different token, issued at `issuedAt`, from the one
    /// it used before, issued at `previousIssuedAt`, updates too soon (APNs: 429
    /// `TooManyProviderTokenUpdates`). Call it only when the token text changed. docs/apns.md reads
    /// Apple's rule by `iat`: the new token's must be at least 20 minutes after the previous one's.
    public static func isUpdateTooSoon(previousIssuedAt: Int64, issuedAt: Int64) -> Bool {
        issuedAt - previousIssuedAt < ProviderToken.minimumUpdateInterval
    }

    private struct Header: Decodable {
        var alg: String
        var kid: String?
    }

    private struct Claims: Decodable {
        var iss: String?
        var iat: Int64?
    }

    private func decode<Part: Decodable>(_ bytes: [UInt8], part: String) throws(TokenVerificationFailure) -> Part {
        do {
            return try JSONDecoder().decode(Part.self, from: Data(bytes))
        } catch {
            throw .malformed("\(part) is not the expected JSON object")
        }
    }
}
