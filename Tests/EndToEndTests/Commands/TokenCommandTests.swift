import Foundation
import Testing
import TestSupport

/// `apns-bulk token`, checked by implementations that share no code with ours: the `openssl`
/// command line makes the keys, Python's `cryptography` verifies the signatures.
@Suite struct TokenCommandTests {
    /// A temporary directory (traversable by any user) with a fresh P-256 `.p8` key and its public key.
    struct KeyDirectory {
        let directory: TemporaryDirectory
        var keyPath: String { directory.path("AuthKey_ABC1234567.p8") }
        var publicKeyPath: String { directory.path("public.pem") }

        init() throws {
            directory = try TemporaryDirectory()
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
            try directory.signingKey("AuthKey_ABC1234567.p8")
            try OpenSSL.run(["pkey", "-in", keyPath, "-pubout", "-out", publicKeyPath])
        }
    }

    /// Verifies an ES256 JWT with Python's `cryptography` (raw r‖s → DER there) and prints the
    /// decoded header and claims, one per line; exits non-zero when the signature is wrong.
    static let pythonVerifier = """
        import base64, sys
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
        def unb64(text): return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        token, public_key_path = sys.argv[1], sys.argv[2]
        header, claims, signature = token.split(".")
        raw = unb64(signature)
        assert len(raw) == 64, "signature is not raw r||s"
        der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
        key = serialization.load_pem_public_key(open(public_key_path, "rb").read())
        key.verify(der, (header + "." + claims).encode(), ec.ECDSA(hashes.SHA256()))
        print(unb64(header).decode())
        print(unb64(claims).decode())
        """

    static func verifyWithPython(_ jwt: String, publicKeyPath: String) throws -> CommandResult {
        try Command.tool("python3", ["-c", pythonVerifier, jwt, publicKeyPath])
    }

    @Test func printedTokenVerifiesWithAnIndependentES256Verifier() throws {
        let keys = try KeyDirectory()
        let before = Int64(Date().timeIntervalSince1970)
        let result = try Binary.run(["token", "--key-file", keys.keyPath, "--key-id", "ABC1234567", "--team-id", "TEAM123456"])
        let after = Int64(Date().timeIntervalSince1970)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderr.isEmpty)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines[1].isEmpty, "exactly one line on stdout")
        let jwt = String(lines[0])

        let verified = try Self.verifyWithPython(jwt, publicKeyPath: keys.publicKeyPath)
        #expect(verified.status == 0, "python: \(verified.stderr)")
        let decoded = verified.stdout.split(separator: "\n").map(String.init)
        try #require(decoded.count == 2)
        #expect(decoded[0] == #"{"alg":"ES256","kid":"ABC1234567"}"#)
        let claimsPrefix = #"{"iss":"TEAM123456","iat":"#
        #expect(decoded[1].hasPrefix(claimsPrefix) && decoded[1].hasSuffix("}"))
        let iat = try #require(Int64(decoded[1].dropFirst(claimsPrefix.count).dropLast()))
        #expect(iat >= before && iat <= after)
    }

    @Test func tamperedTokenFailsTheIndependentVerifier() throws {
        // Shows the Python check can fail: the same token with its team changed does not verify.
        let keys = try KeyDirectory()
        let result = try Binary.run(["token", "--key-file", keys.keyPath, "--key-id", "ABC1234567", "--team-id", "TEAM123456"])
        let jwt = result.stdout.trimmingCharacters(in: .newlines)
        let parts = jwt.split(separator: ".")
        try #require(parts.count == 3)
        let forgedClaims = Data(#"{"iss":"TEAM123457","iat":1}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "=", with: "")
        let forged = "\(parts[0]).\(forgedClaims).\(parts[2])"
        #expect(try Self.verifyWithPython(forged, publicKeyPath: keys.publicKeyPath).status != 0)
    }

    @Test func issuedAtIsHonoured() throws {
        let keys = try KeyDirectory()
        let result = try Binary.run(["token", "--key-file", keys.keyPath, "--key-id", "ABC1234567",
                                     "--team-id", "TEAM123456", "--issued-at", "1700000000"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let verified = try Self.verifyWithPython(result.stdout.trimmingCharacters(in: .newlines), publicKeyPath: keys.publicKeyPath)
        #expect(verified.status == 0, "python: \(verified.stderr)")
        #expect(verified.stdout.split(separator: "\n").last == #"{"iss":"TEAM123456","iat":1700000000}"#)
    }

    @Test func badKeyIDIsExitOneWithAMessageAndNothingOnStdout() throws {
        let keys = try KeyDirectory()
        let result = try Binary.run(["token", "--key-file", keys.keyPath, "--key-id", "abc123", "--team-id", "TEAM123456"])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("\"abc123\""))
        #expect(result.stderr.contains("10 characters"))
        #expect(!result.stderr.contains("Stack dump"))
    }

    @Test func missingKeyFileIsExitOneNamingTheFile() throws {
        let keys = try KeyDirectory()
        let missing = keys.directory.path("AuthKey_NOPE.p8")
        let result = try Binary.run(["token", "--key-file", missing, "--key-id", "ABC1234567", "--team-id", "TEAM123456"])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains(missing))
        #expect(result.stderr.contains("does not exist"))
    }

    @Test func unreadableKeyFileSaysPermissionDenied() throws {
        // Root reads a chmod 000 file regardless, so as root the command runs as user nobody
        // (setpriv); as any other user it runs directly.
        let keys = try KeyDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: keys.keyPath)
        let arguments = ["token", "--key-file", keys.keyPath, "--key-id", "ABC1234567", "--team-id", "TEAM123456"]
        let result = geteuid() == 0
            ? try Command.tool("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", Binary.url.path] + arguments)
            : try Binary.run(arguments)
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains(keys.keyPath))
        #expect(result.stderr.contains("permission denied"))
    }

    @Test func missingTeamIDIsAUsageError() throws {
        let keys = try KeyDirectory()
        let result = try Binary.run(["token", "--key-file", keys.keyPath, "--key-id", "ABC1234567"])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("--team-id"))
    }
}
