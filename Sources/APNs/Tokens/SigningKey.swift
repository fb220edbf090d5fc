import COpenSSL
import Synchronization

/// The P-256 private key that signs provider tokens (ES256): an APNs `.p8` file.
///
/// Loads PKCS#8 PEM ("BEGIN PRIVATE KEY", what Apple hands out) and SEC1 PEM
/// ("BEGIN EC PRIVATE KEY"), and refuses anything else with a message naming the file and the fix.
///
/// Threads: a `SigningKey` may be shared by any number of threads. Every use of the key goes
/// through one lock: signing happens about once per 50 minutes, so the lock costs nothing, and it
/// spares us relying on how OpenSSL caches provider-side key data inside an `EVP_PKEY`.
/// `description` never shows key material; `pkcs8PEM()` does, so never log it.
public final class SigningKey: @unchecked Sendable {  // the EVP_PKEY is only touched under `lock`
    private let key: OpaquePointer  // EVP_PKEY*, owned; freed in deinit
    private let lock = Mutex(())
    /// Where the key came from ("key file \"K.p8\"", "generated key", ...), for messages.
    public let source: String

    private init(owning key: OpaquePointer, source: String) {
        self.key = key
        self.source = source
    }

    deinit { EVP_PKEY_free(key) }

    /// Loads the key in the PEM file at `path`.
    public convenience init(contentsOfFile path: String) throws(SigningKeyError) {
        let bytes = try KeyFile.load(path)
        try self.init(pemBytes: bytes, source: "key file \"\(path)\"")
    }

    /// Loads the key from PEM text; `source` names it in error messages.
    public convenience init(pem: String, source: String = "the key PEM text") throws(SigningKeyError) {
        try self.init(pemBytes: Array(pem.utf8), source: source)
    }

    private convenience init(pemBytes: [UInt8], source: String) throws(SigningKeyError) {
        if pemBytes.count > SigningKeyError.maximumFileSize {
            throw .tooLarge(source: source, bytes: pemBytes.count)
        }
        try PEMLabels.requirePrivateKey(in: pemBytes, source: source)
        let parsed = withMemoryBIO(over: pemBytes) { bio in
            // A password callback that refuses, so an encrypted key we failed to spot never
            // makes OpenSSL prompt on the terminal.
            PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in -1 }, nil)
        }
        guard let parsed, let key = parsed else {
            throw .invalidKey(source: source, detail: drainOpenSSLErrors())
        }
        do throws(SigningKeyError) {
            try Self.requireP256(key, source: source)
            try Self.requireMatchingPublicKey(key, source: source)
        } catch {
            EVP_PKEY_free(key)
            throw error
        }
        self.init(owning: key, source: source)
    }

    /// A fresh P-256 key, e.g. for the embedded mock server or a test.
    public static func generate() throws(SigningKeyError) -> SigningKey {
        guard let key = apnsbulk_EVP_EC_gen_p256() else {
            throw .openSSL(operation: "generate a P-256 key", detail: drainOpenSSLErrors())
        }
        return SigningKey(owning: key, source: "generated key")
    }

    /// The private key as PKCS#8 PEM ("BEGIN PRIVATE KEY"), the format of an APNs `.p8` file.
    /// This is the secret: write it to a file only a trusted user can read, never to a log.
    public func pkcs8PEM() throws(SigningKeyError) -> String {
        let text = lock.withLock { _ in
            pemText { bio in PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) }
        }
        guard let text else { throw .openSSL(operation: "export the private key", detail: drainOpenSSLErrors()) }
        return text
    }

    /// The public key as PEM SubjectPublicKeyInfo ("BEGIN PUBLIC KEY"), for a `TokenVerifier`.
    public func publicKeyPEM() throws(SigningKeyError) -> String {
        let text = lock.withLock { _ in
            pemText { bio in PEM_write_bio_PUBKEY(bio, key) }
        }
        guard let text else { throw .openSSL(operation: "export the public key", detail: drainOpenSSLErrors()) }
        return text
    }

    /// The ES256 signature of `message` (ECDSA P-256 over SHA-256) as raw 64-byte r‖s, as JWS wants.
    public func signES256(_ message: some Collection<UInt8>) throws(SigningKeyError) -> [UInt8] {
        let input = Array(message)
        let der: [UInt8]? = lock.withLock { _ in
            guard let context = EVP_MD_CTX_new() else { return nil }
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else { return nil }
            var length = 0
            guard EVP_DigestSign(context, nil, &length, input, input.count) == 1 else { return nil }
            var signature = [UInt8](repeating: 0, count: length)
            guard EVP_DigestSign(context, &signature, &length, input, input.count) == 1 else { return nil }
            return Array(signature.prefix(length))
        }
        guard let der, let raw = ES256Signature.raw(fromDER: der) else {
            throw .openSSL(operation: "sign a provider token with \(source)", detail: drainOpenSSLErrors())
        }
        return raw
    }

    /// Throws unless `key` is an EC key on P-256, naming what it is instead.
    static func requireP256(_ key: OpaquePointer, source: String) throws(SigningKeyError) {
        let baseID = EVP_PKEY_get_base_id(key)
        if baseID == apnsbulk_EVP_PKEY_RSA() || baseID == EVP_PKEY_RSA_PSS {
            throw .rsaKey(source: source)
        }
        guard baseID == apnsbulk_EVP_PKEY_EC() else {
            let name = EVP_PKEY_get0_type_name(key).map { String(cString: $0) } ?? "non-EC"
            throw .unsupportedKeyType(source: source, type: name)
        }
        var buffer = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(key, &buffer, buffer.count, &length) == 1 else {
            throw .wrongCurve(source: source, curve: "(unnamed curve: \(drainOpenSSLErrors()))")
        }
        let curve = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard curve == "prime256v1" || curve == "P-256" else {
            throw .wrongCurve(source: source, curve: curve)
        }
    }
}

extension SigningKey {
    /// Throws unless the public key stored in the file is the private key's own. OpenSSL takes the
    /// stored one as it is, so a damaged file would sign tokens that no verifier made from the
    /// same file accepts (the mock's `--verify-key-file`): found by fuzzing the key reader.
    static func requireMatchingPublicKey(_ key: OpaquePointer, source: String) throws(SigningKeyError) {
        guard let context = EVP_PKEY_CTX_new(key, nil) else {
            throw .openSSL(operation: "check \(source)", detail: drainOpenSSLErrors())
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_check(context) == 1 else {
            throw .invalidKey(source: source, detail: "its public key does not belong to its private key: \(drainOpenSSLErrors())")
        }
    }
}

extension SigningKey: CustomStringConvertible {
    /// Names the key's origin only; never its material.
    public var description: String { "SigningKey(P-256, \(source))" }
}
