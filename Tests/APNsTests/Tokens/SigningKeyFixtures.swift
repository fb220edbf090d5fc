import COpenSSL
import Foundation
import Testing
@testable import APNs

/// Real keys and files for the provider-token tests, made at test time.
enum KeyFixtures {
    /// Decodes base64url with Foundation, independently of `Base64URL`.
    static func foundationBase64URLDecode(_ text: some StringProtocol) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }

    /// Checks an ES256 JWS signature with OpenSSL's C API directly: raw r‖s to DER by hand, then
    /// EVP_DigestVerify with the public key PEM.
    static func openSSLVerifies(jwt: String, publicKeyPEM: String) -> Bool {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let raw = foundationBase64URLDecode(parts[2]), raw.count == 64 else { return false }
        let signingInput = Array((parts[0] + "." + parts[1]).utf8)

        let pem = Array(publicKeyPEM.utf8)
        guard let bio = BIO_new_mem_buf(pem, Int32(pem.count)) else { return false }
        defer { BIO_free(bio) }
        guard let key = PEM_read_bio_PUBKEY(bio, nil, nil, nil) else { return false }
        defer { EVP_PKEY_free(key) }

        guard let signature = ECDSA_SIG_new() else { return false }
        defer { ECDSA_SIG_free(signature) }
        let bytes = [UInt8](raw)
        let r = BN_bin2bn(bytes, 32, nil)
        let s = BN_bin2bn(Array(bytes[32...]), 32, nil)
        guard ECDSA_SIG_set0(signature, r, s) == 1 else { return false }
        let length = i2d_ECDSA_SIG(signature, nil)
        var der = [UInt8](repeating: 0, count: Int(length))
        _ = der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }

        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        let verified = EVP_DigestVerify(context, der, der.count, signingInput, signingInput.count) == 1
        ERR_clear_error()
        return verified
    }
}

extension Array where Element == UInt8 {
    /// A copy with one bit of the byte at `index` flipped.
    func flippingBit(at index: Int) -> [UInt8] {
        var copy = self
        copy[index] ^= 0x01
        return copy
    }
}
