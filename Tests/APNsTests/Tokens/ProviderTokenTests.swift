import Foundation
import Testing
@testable import APNs

@Suite struct ProviderTokenTests {
    static let keyID = try! ProviderToken.KeyID("ABC1234567")
    static let teamID = try! ProviderToken.TeamID("TEAM123456")

    private func token(issuedAt: Int64 = 1_700_000_000) throws -> (ProviderToken, SigningKey) {
        let key = try SigningKey.generate()
        return (try ProviderToken(signingKey: key, keyID: Self.keyID, teamID: Self.teamID, issuedAt: issuedAt), key)
    }

    @Test func headerAndClaimsAreExactlyTheAPNsJSON() throws {
        let (token, _) = try token(issuedAt: 1_700_000_123)
        let parts = token.jwt.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        let header = try #require(KeyFixtures.foundationBase64URLDecode(parts[0]))
        let claims = try #require(KeyFixtures.foundationBase64URLDecode(parts[1]))
        #expect(String(decoding: header, as: UTF8.self) == #"{"alg":"ES256","kid":"ABC1234567"}"#)
        #expect(String(decoding: claims, as: UTF8.self) == #"{"iss":"TEAM123456","iat":1700000123}"#)
        #expect(token.issuedAt == 1_700_000_123)
        #expect(!token.jwt.contains("="))
        #expect(!token.jwt.contains("+") && !token.jwt.contains("/"))
    }

    @Test func signatureVerifiesWithOpenSSL() throws {
        let (token, key) = try token()
        #expect(KeyFixtures.openSSLVerifies(jwt: token.jwt, publicKeyPEM: try key.publicKeyPEM()))
    }

    @Test func signatureFailsAfterOneByteOfThePayloadChanges() throws {
        let (token, key) = try token()
        let parts = token.jwt.split(separator: ".", omittingEmptySubsequences: false)
        let claims = [UInt8](try #require(KeyFixtures.foundationBase64URLDecode(parts[1])))
        // "TEAM123456" → "TEAM123457": one byte of the claims.
        let index = try #require(claims.firstIndex(of: UInt8(ascii: "6")))
        let tampered = parts[0] + "." + Base64URL.encode(claims.flippingBit(at: index)) + "." + parts[2]
        #expect(!KeyFixtures.openSSLVerifies(jwt: String(tampered), publicKeyPEM: try key.publicKeyPEM()))
    }

    @Test func signatureFailsAfterOneByteOfTheSignatureChanges() throws {
        let (token, key) = try token()
        let parts = token.jwt.split(separator: ".", omittingEmptySubsequences: false)
        let signature = [UInt8](try #require(KeyFixtures.foundationBase64URLDecode(parts[2])))
        for index in [0, 31, 32, 63] {
            let tampered = parts[0] + "." + parts[1] + "." + Base64URL.encode(signature.flippingBit(at: index))
            #expect(!KeyFixtures.openSSLVerifies(jwt: String(tampered), publicKeyPEM: try key.publicKeyPEM()))
        }
    }

    @Test func anotherKeysSignatureDoesNotVerify() throws {
        let (token, _) = try token()
        let other = try SigningKey.generate()
        #expect(!KeyFixtures.openSSLVerifies(jwt: token.jwt, publicKeyPEM: try other.publicKeyPEM()))
    }

    @Test func authorizationIsBearerAndTheToken() throws {
        let (token, _) = try token()
        #expect(String(decoding: token.authorization, as: UTF8.self) == "bearer " + token.jwt)
    }

    @Test func descriptionIsRedacted() throws {
        let (token, _) = try token()
        let parts = token.jwt.split(separator: ".")
        let text = String(describing: token)
        #expect(!text.contains(parts[0]) && !text.contains(parts[1]) && !text.contains(parts[2]))
        #expect(text.contains("ABC1234567") && text.contains("TEAM123456") && text.contains("1700000000"))
    }

    @Test(arguments: ["", "ABC123456", "ABC12345678", "abc1234567", "ABC-123456", "ABC 123456", "ÄBC1234567"])
    func keyIDMustBeTenUppercaseLettersOrDigits(_ value: String) throws {
        let error = try #require(throws: ProviderTokenError.self) { try ProviderToken.KeyID(value) }
        #expect(error == .invalidKeyID(value))
        #expect(error.message.contains("\"\(value)\""))
        #expect(error.message.contains("10 characters"))
    }

    @Test(arguments: ["", "TEAM12345", "team123456", "TEAM1234567"])
    func teamIDMustBeTenUppercaseLettersOrDigits(_ value: String) throws {
        let error = try #require(throws: ProviderTokenError.self) { try ProviderToken.TeamID(value) }
        #expect(error == .invalidTeamID(value))
        #expect(error.message.contains("\"\(value)\""))
        #expect(error.message.contains("team id"))
    }

    @Test func validIdentifiersAreKeptAsGiven() throws {
        #expect(try ProviderToken.KeyID("Z9Y8X7W6V5").value == "Z9Y8X7W6V5")
        #expect(try ProviderToken.TeamID("0000000000").value == "0000000000")
    }
}
