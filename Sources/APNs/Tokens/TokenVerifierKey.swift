import COpenSSL
import Synchronization

/// A P-256 public key that checks ES256 signatures.
///
/// Shared by every thread of a mock server: each check runs under `lock` (verification results
/// are cached per distinct token by the caller, so the lock is rarely taken).
final class ES256PublicKey: @unchecked Sendable {  // the EVP_PKEY is only touched under `lock`
    private let key: OpaquePointer  // EVP_PKEY*, owned; freed in deinit
    private let lock = Mutex(())

    /// Loads "BEGIN PUBLIC KEY" PEM; `source` names it in error messages.
    init(pem: String, source: String) throws(SigningKeyError) {
        let bytes = Array(pem.utf8)
        let labels = PEMLabels.labels(in: bytes)
        guard let first = labels.first else { throw .notPEM(source: source) }
        guard labels.contains("PUBLIC KEY") else { throw .notAPrivateKey(source: source, label: first) }
        let parsed = withMemoryBIO(over: bytes) { bio in PEM_read_bio_PUBKEY(bio, nil, nil, nil) }
        guard let parsed, let key = parsed else {
            throw .invalidKey(source: source, detail: drainOpenSSLErrors())
        }
        do throws(SigningKeyError) {
            try SigningKey.requireP256(key, source: source)
        } catch {
            EVP_PKEY_free(key)
            throw error
        }
        self.key = key
    }

    deinit { EVP_PKEY_free(key) }

    /// Whether raw r‖s `signature` is this key's ES256 signature of `message`.
    func verify(signature: [UInt8], of message: some Collection<UInt8>) -> Bool {
        guard let der = ES256Signature.der(fromRaw: signature) else { return false }
        let input = Array(message)
        let valid = lock.withLock { _ -> Bool in
            guard let context = EVP_MD_CTX_new() else { return false }
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
            return EVP_DigestVerify(context, der, der.count, input, input.count) == 1
        }
        if !valid { _ = drainOpenSSLErrors() }
        return valid
    }
}
