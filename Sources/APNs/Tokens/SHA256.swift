import COpenSSL

/// A SHA-256 digest fed piece by piece (OpenSSL's), for a module that keeps no crypto library of its
/// own (the input file's fingerprint). Owns its digest context, freed in deinit; one thread at a time.
package final class SHA256 {
    private let context: OpaquePointer

    /// A digest of nothing yet; nil when OpenSSL cannot make one (out of memory).
    package init?() {
        guard let context = EVP_MD_CTX_new() else { return nil }
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            EVP_MD_CTX_free(context)
            return nil
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Adds `bytes` to what is digested.
    package func update(_ bytes: UnsafeRawBufferPointer) {
        _ = EVP_DigestUpdate(context, bytes.baseAddress, bytes.count)
    }

    /// The 32-byte digest of everything added. Call once: the digest is then spent.
    package func finish() -> [UInt8] {
        var hash = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &hash, &length)
        return Array(hash.prefix(Int(length)))
    }
}
