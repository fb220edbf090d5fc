import Foundation
import Testing
import TestSupport
@testable import APNs

@Suite struct TokenVerifierTests {
    static let keyID = try! ProviderToken.KeyID("ABC1234567")
    static let teamID = try! ProviderToken.TeamID("TEAM123456")

    let key: SigningKey
    let verifier: TokenVerifier

    init() throws {
        key = try SigningKey.generate()
        verifier = try TokenVerifier(publicKeyPEM: key.publicKeyPEM(), keyID: Self.keyID, teamID: Self.teamID)
    }

    private func sign(header: String, claims: String, with signer: SigningKey? = nil) throws -> String {
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        return input + "." + Base64URL.encode(try (signer ?? key).signES256(Array(input.utf8)))
    }

    private func failure(_ jwt: String) -> TokenVerificationFailure? {
        do {
            _ = try verifier.verify(jwt)
            return nil
        } catch {
            return error
        }
    }

    @Test func validTokenReturnsItsIssuedAt() throws {
        let token = try ProviderToken(signingKey: key, keyID: Self.keyID, teamID: Self.teamID, issuedAt: 1_700_000_042)
        #expect(try verifier.verify(token.jwt) == 1_700_000_042)
        #expect(try verifier.verify(Substring(token.jwt)) == 1_700_000_042)
    }

    @Test func verifierBuiltFromTheSigningKeyAgrees() throws {
        let fromKey = try TokenVerifier(signingKey: key, keyID: Self.keyID, teamID: Self.teamID)
        let token = try ProviderToken(signingKey: key, keyID: Self.keyID, teamID: Self.teamID, issuedAt: 7)
        #expect(try fromKey.verify(token.jwt) == 7)
    }

    @Test func tokenOfAnotherKeyIsInvalid() throws {
        let other = try SigningKey.generate()
        let token = try ProviderToken(signingKey: other, keyID: Self.keyID, teamID: Self.teamID, issuedAt: 7)
        #expect(failure(token.jwt) == .badSignature)
        #expect(failure(token.jwt)?.reason == "InvalidProviderToken")
    }

    @Test func oneChangedByteOfClaimsOrSignatureIsInvalid() throws {
        let token = try ProviderToken(signingKey: key, keyID: Self.keyID, teamID: Self.teamID, issuedAt: 7)
        let parts = token.jwt.split(separator: ".")
        let claims = try #require(Base64URL.decode(parts[1]))
        let signature = try #require(Base64URL.decode(parts[2]))
        let badClaims = parts[0] + "." + Base64URL.encode(claims.flippingBit(at: 10)) + "." + parts[2]
        let badSignature = parts[0] + "." + parts[1] + "." + Base64URL.encode(signature.flippingBit(at: 40))
        #expect(failure(String(badClaims)) == .badSignature)
        #expect(failure(String(badSignature)) == .badSignature)
    }

    @Test func wrongAlgorithmKeyIDOrTeamIsInvalid() throws {
        let alg = try sign(header: #"{"alg":"HS256","kid":"ABC1234567"}"#, claims: #"{"iss":"TEAM123456","iat":7}"#)
        let kid = try sign(header: #"{"alg":"ES256","kid":"ZZZ1234567"}"#, claims: #"{"iss":"TEAM123456","iat":7}"#)
        let iss = try sign(header: #"{"alg":"ES256","kid":"ABC1234567"}"#, claims: #"{"iss":"OTHER12345","iat":7}"#)
        #expect(failure(alg) == .unsupportedAlgorithm("HS256"))
        #expect(failure(kid) == .wrongKeyID("ZZZ1234567"))
        #expect(failure(iss) == .wrongTeam("OTHER12345"))
        for jwt in [alg, kid, iss] { #expect(failure(jwt)?.reason == "InvalidProviderToken") }
    }

    @Test func extraHeaderFieldsAndSpacingAreAccepted() throws {
        let jwt = try sign(header: #"{ "typ": "JWT", "alg": "ES256", "kid": "ABC1234567" }"#,
                           claims: #"{"iat": 99, "iss": "TEAM123456"}"#)
        #expect(try verifier.verify(jwt) == 99)
    }

    @Test(arguments: [
        "", "a.b", "a.b.c.d", "eyJ.eyJ.", "!!!.eyJ.abc",
    ])
    func structurallyBrokenTokensAreMalformed(_ jwt: String) {
        guard case .malformed = failure(jwt) else {
            Issue.record("expected malformed for \(jwt.debugDescription), got \(String(describing: failure(jwt)))")
            return
        }
    }

    @Test func missingOrNonIntegerClaimsAreMalformed() throws {
        let header = #"{"alg":"ES256","kid":"ABC1234567"}"#
        for claims in [#"{"iss":"TEAM123456"}"#, #"{"iat":7}"#, #"{"iss":"TEAM123456","iat":7.5}"#,
                       #"{"iss":"TEAM123456","iat":"7"}"#, #"[1,2]"#, "not json"] {
            let jwt = try sign(header: header, claims: claims)
            guard case .malformed = failure(jwt) else {
                Issue.record("expected malformed for claims \(claims), got \(String(describing: failure(jwt)))")
                continue
            }
        }
        let noKid = try sign(header: #"{"alg":"ES256"}"#, claims: #"{"iss":"TEAM123456","iat":7}"#)
        guard case .malformed = failure(noKid) else {
            Issue.record("expected malformed without kid")
            return
        }
    }

    @Test func shortSignatureIsMalformed() throws {
        let token = try ProviderToken(signingKey: key, keyID: Self.keyID, teamID: Self.teamID, issuedAt: 7)
        let parts = token.jwt.split(separator: ".")
        let raw = try #require(Base64URL.decode(parts[2]))
        let der = try #require(ES256Signature.der(fromRaw: raw))
        // A DER signature (what OpenSSL emits) instead of raw r‖s is a classic mistake.
        let jwt = parts[0] + "." + parts[1] + "." + Base64URL.encode(der)
        guard case .malformed = failure(String(jwt)) else {
            Issue.record("expected malformed for a DER signature")
            return
        }
    }

    @Test func ageIsCheckedSeparatelyAgainstOneHour() throws {
        #expect(throws: Never.self) { try TokenVerifier.checkAge(issuedAt: 1000, now: 1000 + 3600) }
        #expect(throws: Never.self) { try TokenVerifier.checkAge(issuedAt: 1000, now: 900) }
        let error = try #require(throws: TokenVerificationFailure.self) {
            try TokenVerifier.checkAge(issuedAt: 1000, now: 1000 + 3601)
        }
        #expect(error == .expired(issuedAt: 1000, ageSeconds: 3601))
        #expect(error.reason == "ExpiredProviderToken")
    }

    @Test func tokenUpdatesLessThanTwentyMinutesApartAreTooSoon() {
        #expect(TokenVerifier.isUpdateTooSoon(previousIssuedAt: 1000, issuedAt: 1000 + 1199))
        #expect(TokenVerifier.isUpdateTooSoon(previousIssuedAt: 1000, issuedAt: 1000))
        #expect(!TokenVerifier.isUpdateTooSoon(previousIssuedAt: 1000, issuedAt: 1000 + 1200))
        #expect(!TokenVerifier.isUpdateTooSoon(previousIssuedAt: 1000, issuedAt: 1000 + 50 * 60))
    }

    @Test func verifierRefusesAPrivateKeyOrP384PublicKey() throws {
        let privatePEM = try key.pkcs8PEM()
        #expect(throws: SigningKeyError.self) {
            try TokenVerifier(publicKeyPEM: privatePEM, keyID: Self.keyID, teamID: Self.teamID)
        }
        let directory = try TemporaryDirectory()
        let path = directory.path("p384.p8")
        try OpenSSL.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", path])
        let p384Public = try OpenSSL.run(["pkey", "-in", path, "-pubout"])
        let error = try #require(throws: SigningKeyError.self) {
            try TokenVerifier(publicKeyPEM: p384Public, keyID: Self.keyID, teamID: Self.teamID)
        }
        guard case .wrongCurve(_, "secp384r1") = error else {
            Issue.record("expected wrongCurve, got \(error)")
            return
        }
    }
}
