import APNs
import FuzzSupport
import Transport

/// Every way a key or certificate file is read: the `.p8` signing key (PEM, PKCS#8 or SEC1, with
/// the armour checks in front of OpenSSL), a verifier's public key, `.p12` files (empty or a
/// password), and a PEM certificate with its key file. A file that loads must also work: a signing
/// key signs, and its signature verifies with its own public key.
///
/// Input: one byte choosing the reader (value mod 5), then the file. For the certificate and key
/// pair, the file is cut at its first NUL byte: the certificate before it, the key after.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeys(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzFile.removeAtExit(suffixes: ["", ".crt", ".key"])
    _ = opensslWithoutCleanUp
    var input = FuzzInput(data, size)
    let reader = input.byte() % 5
    let file = input.rest()
    switch reader {
    case 0:
        guard let key = try? SigningKey(contentsOfFile: FuzzFile.write(file)) else { break }
        signAndVerify(key)
    case 1:
        _ = try? TokenVerifier(publicKeyPEM: String(decoding: file, as: UTF8.self), keyID: keyID, teamID: teamID)
    case 2, 3:
        _ = try? TLSIdentity.load(pkcs12File: FuzzFile.write(file), password: reader == 2 ? "" : "secret")
    default:
        let certificate = file.prefix { $0 != 0 }
        let key = file.dropFirst(certificate.count + 1)
        _ = try? TLSIdentity.load(certificateFile: FuzzFile.write(certificate, suffix: ".crt"),
                                  keyFile: FuzzFile.write(key, suffix: ".key"))
    }
    return 0
}

let keyID = try! ProviderToken.KeyID("ABCDE12345")
let teamID = try! ProviderToken.TeamID("TEAM123456")

func signAndVerify(_ key: SigningKey) {
    do {
        let token = try ProviderToken(signingKey: key, keyID: keyID, teamID: teamID, issuedAt: 1_700_000_000)
        let verifier = try TokenVerifier(signingKey: key, keyID: keyID, teamID: teamID)
        let issuedAt = try verifier.verify(token.jwt)
        fuzzCheck(issuedAt == 1_700_000_000, "the token verified with iat \(issuedAt)")
    } catch {
        fuzzCheck(false, "a key that loaded cannot sign a token its own public key verifies: \(error)")
    }
}

/// As apns-bulk's `main` does: OpenSSL's state is kept until exit (no clean-up at exit, which
/// would leave half-freed provider state for LeakSanitizer to report).
let opensslWithoutCleanUp: Void = CryptoLibrary.keepStateUntilExit()
