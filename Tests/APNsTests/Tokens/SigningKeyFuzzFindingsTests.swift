import Testing
@testable import APNs

/// Key files the key-reader fuzzer (Fuzz/Sources/FuzzKeys) found mishandled, kept as they were found.
@Suite struct SigningKeyFuzzFindingsTests {
    /// A SEC1 key with one character of its stored public key changed: OpenSSL loads it as it is,
    /// and it signed tokens that a verifier made from the same file (the mock's
    /// `--verify-key-file`) refused. Now it is refused as damaged when it is loaded.
    static let damagedPublicHalf = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIK4WBf/XFNM82UfaQAGdMCgl2w4zyaVm1xUYsWb7z1e8oAoGCCqGSM49
        AwEHoUQDQgAESJyTUtHlulgvkAGNtbGpcTd6i1bl492dvVUBCAtJZY56zw+Bx88m
        lsoT1lx9smfeyFZyjde9wl7l/LAk02TC4w==
        -----END EC PRIVATE KEY-----

        """

    @Test func aKeyWhoseStoredPublicKeyIsNotItsOwnIsRefusedAsDamaged() {
        do {
            let key = try SigningKey(pem: Self.damagedPublicHalf, source: "damaged.p8")
            Issue.record("loaded \(key), whose public key does not belong to its private key")
        } catch {
            guard case .invalidKey(let source, let detail) = error else {
                Issue.record("refused for another reason: \(error)")
                return
            }
            #expect(source == "damaged.p8")
            #expect(detail.contains("public key does not belong to its private key"), "\(detail)")
            #expect(error.message.contains("damaged"), "\(error.message)")
        }
    }

    @Test func anIntactKeyStillLoadsAndItsTokensVerifyWithItsOwnPublicKey() throws {
        let key = try SigningKey(pem: try SigningKey.generate().pkcs8PEM(), source: "intact.p8")
        let keyID = try ProviderToken.KeyID("ABCDE12345")
        let teamID = try ProviderToken.TeamID("TEAM123456")
        let token = try ProviderToken(signingKey: key, keyID: keyID, teamID: teamID, issuedAt: 1_700_000_000)
        let verifier = try TokenVerifier(signingKey: key, keyID: keyID, teamID: teamID)
        #expect(try verifier.verify(token.jwt) == 1_700_000_000)
    }
}
