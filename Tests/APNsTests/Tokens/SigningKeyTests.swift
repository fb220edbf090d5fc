import Foundation
import Testing
import TestSupport
@testable import APNs

@Suite struct SigningKeyTests {
    let keyID = try! ProviderToken.KeyID("ABC1234567")
    let teamID = try! ProviderToken.TeamID("TEAM123456")

    /// Loads `path`, expecting a failure, and returns it.
    private func loadFailure(_ path: String) -> SigningKeyError? {
        do {
            _ = try SigningKey(contentsOfFile: path)
            return nil
        } catch {
            return error
        }
    }

    @Test func pkcs8KeyFromOpenSSLLoadsAndSignsAVerifiableSignature() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("AuthKey.p8")
        try OpenSSL.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path])
        #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("-----BEGIN PRIVATE KEY-----"))

        let key = try SigningKey(contentsOfFile: path)
        let publicPEM = try OpenSSL.run(["pkey", "-in", path, "-pubout"])
        let token = try ProviderToken(signingKey: key, keyID: keyID, teamID: teamID, issuedAt: 1_700_000_000)
        #expect(KeyFixtures.openSSLVerifies(jwt: token.jwt, publicKeyPEM: publicPEM))
    }

    @Test func sec1KeyLoadsAndSignsAVerifiableSignature() throws {
        let directory = try TemporaryDirectory()
        let pkcs8 = directory.path("key.p8")
        let sec1 = directory.path("key-sec1.pem")
        try OpenSSL.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", pkcs8])
        try OpenSSL.run(["ec", "-in", pkcs8, "-out", sec1])
        #expect(try String(contentsOfFile: sec1, encoding: .utf8).hasPrefix("-----BEGIN EC PRIVATE KEY-----"))

        let key = try SigningKey(contentsOfFile: sec1)
        let publicPEM = try OpenSSL.run(["pkey", "-in", pkcs8, "-pubout"])
        let token = try ProviderToken(signingKey: key, keyID: keyID, teamID: teamID, issuedAt: 1_700_000_000)
        #expect(KeyFixtures.openSSLVerifies(jwt: token.jwt, publicKeyPEM: publicPEM))
    }

    @Test func ecParamGenKeyWithParametersBlockFirstLoads() throws {
        // `openssl ecparam -genkey` writes an "EC PARAMETERS" block before the key.
        let directory = try TemporaryDirectory()
        let path = directory.path("key.pem")
        try OpenSSL.run(["ecparam", "-name", "prime256v1", "-genkey", "-out", path])
        let key = try SigningKey(contentsOfFile: path)
        let token = try ProviderToken(signingKey: key, keyID: keyID, teamID: teamID, issuedAt: 1)
        #expect(KeyFixtures.openSSLVerifies(jwt: token.jwt, publicKeyPEM: try key.publicKeyPEM()))
    }

    @Test func generatedKeyExportsPKCS8ThatLoadsBackAsTheSameKey() throws {
        let key = try SigningKey.generate()
        let pem = try key.pkcs8PEM()
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let reloaded = try SigningKey(pem: pem)
        #expect(try reloaded.publicKeyPEM() == key.publicKeyPEM())
        #expect(try key.publicKeyPEM().hasPrefix("-----BEGIN PUBLIC KEY-----"))

        // openssl agrees that the exported text is a P-256 key with that public half.
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("generated.p8")
        try pem.write(to: path, atomically: true, encoding: .utf8)
        #expect(try OpenSSL.run(["pkey", "-in", path.path, "-pubout"]) == key.publicKeyPEM())
        #expect(try OpenSSL.run(["pkey", "-in", path.path, "-noout", "-text"]).contains("prime256v1"))
    }

    @Test func signaturesAreRaw64ByteRAndS() throws {
        let key = try SigningKey.generate()
        let first = try key.signES256(Array("message".utf8))
        let second = try key.signES256(Array("message".utf8))
        #expect(first.count == 64)
        #expect(first != second)  // ECDSA nonces are random
    }

    @Test func descriptionNeverShowsKeyMaterial() throws {
        let key = try SigningKey.generate()
        let pem = try key.pkcs8PEM()
        let body = pem.split(separator: "\n")[1]
        #expect(!String(describing: key).contains(body))
        #expect(String(describing: key).contains("P-256"))
    }

    @Test func missingFileSaysItDoesNotExist() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("AuthKey_MISSING.p8")
        let error = try #require(loadFailure(path))
        #expect(error == .fileNotFound(path: path))
        #expect(error.message.contains(path))
        #expect(error.message.contains("does not exist"))
    }

    @Test func directoryPathSaysItIsADirectory() throws {
        // Tests run as root, where a chmod 000 file is still readable; a directory is unreadable
        // as a key for everyone. Permission denied is tested end to end as an unprivileged user
        // (TokenCommandTests.unreadableKeyFileSaysPermissionDenied).
        let directory = try TemporaryDirectory()
        let error = try #require(loadFailure(directory.path))
        #expect(error == .isDirectory(path: directory.path))
        #expect(error.message.contains(directory.path))
        #expect(error.message.contains("directory"))
    }

    @Test func garbageTextSaysItIsNotPEM() throws {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent("garbage.p8")
        try "this is not a key\n".write(to: path, atomically: true, encoding: .utf8)
        let error = try #require(loadFailure(path.path))
        #expect(error == .notPEM(source: "key file \"\(path.path)\""))
        #expect(error.message.contains("not a PEM key"))
        #expect(error.message.contains(path.path))
    }

    @Test func encryptedPKCS8SaysHowToDecrypt() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("encrypted.p8")
        try OpenSSL.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                                 "-aes256", "-pass", "pass:secret", "-out", path])
        #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"))
        let error = try #require(loadFailure(path))
        #expect(error == .encrypted(source: "key file \"\(path)\""))
        #expect(error.message.contains("not encrypted"))
        #expect(error.message.contains("openssl pkey"))
        #expect(error.message.contains(path))
    }

    @Test func encryptedSEC1KeySaysHowToDecrypt() throws {
        let directory = try TemporaryDirectory()
        let plain = directory.path("key.p8")
        let path = directory.path("encrypted-sec1.pem")
        try OpenSSL.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", plain])
        try OpenSSL.run(["ec", "-in", plain, "-aes256", "-passout", "pass:secret", "-out", path])
        #expect(loadFailure(path) == .encrypted(source: "key file \"\(path)\""))
    }

    @Test func rsaKeySaysES256NeedsP256() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("rsa.p8")
        try OpenSSL.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", path])
        let error = try #require(loadFailure(path))
        #expect(error == .rsaKey(source: "key file \"\(path)\""))
        #expect(error.message.contains("RSA"))
        #expect(error.message.contains("P-256"))
    }

    @Test func p384KeyNamesItsCurve() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("p384.p8")
        try OpenSSL.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", path])
        let error = try #require(loadFailure(path))
        #expect(error == .wrongCurve(source: "key file \"\(path)\"", curve: "secp384r1"))
        #expect(error.message.contains("secp384r1"))
        #expect(error.message.contains("P-256"))
    }

    @Test func certificateSaysItIsNotAPrivateKey() throws {
        let directory = try TemporaryDirectory()
        let key = directory.path("key.p8")
        let path = directory.path("cert.pem")
        try OpenSSL.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key])
        try OpenSSL.run(["req", "-new", "-x509", "-key", key, "-subj", "/CN=test", "-days", "1", "-out", path])
        let error = try #require(loadFailure(path))
        #expect(error == .notAPrivateKey(source: "key file \"\(path)\"", label: "CERTIFICATE"))
    }

    @Test func damagedKeyBodySaysItCannotBeRead() throws {
        let pem = "-----BEGIN PRIVATE KEY-----\nAAAAbm90IGEga2V5\n-----END PRIVATE KEY-----\n"
        let error = try #require(throws: SigningKeyError.self) { try SigningKey(pem: pem, source: "damaged") }
        guard case .invalidKey(let source, _) = error else {
            Issue.record("expected invalidKey, got \(error)")
            return
        }
        #expect(source == "damaged")
        #expect(error.message.contains("openssl pkey"))
    }
}
