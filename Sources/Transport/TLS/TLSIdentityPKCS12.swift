import COpenSSL

extension TLSIdentity {
    /// Loads a `.p12` (PKCS#12) file: the certificate, its key and any CA certificates in it.
    ///
    /// Keychain exports are often encrypted with RC2 or 3DES, which OpenSSL 3 keeps in its
    /// `legacy` provider; it is loaded (with `default`) before parsing, and its absence is named
    /// in the error when such a file cannot be decrypted.
    public static func load(pkcs12File path: String, password: String) throws(TLSError) -> TLSIdentity {
        let bytes = try PEMFile.read(path)
        let legacy = LegacyProvider.status
        return try PEMFile.withBIO(bytes) { bio throws(TLSError) in
            guard let p12 = d2i_PKCS12_bio(bio, nil) else {
                ERR_clear_error()
                throw TLSError.unusableFile(path: path, reason: "not a PKCS#12 (.p12) file")
            }
            defer { PKCS12_free(p12) }
            guard let usedPassword = macPassword(p12, password) else {
                ERR_clear_error()
                throw password.isEmpty ? TLSError.pkcs12PasswordNeeded(path: path) : TLSError.pkcs12WrongPassword(path: path)
            }
            var key: OpaquePointer?
            var certificate: OpaquePointer?
            var authorities: OpaquePointer?
            let parsed = usedPassword.withCString { PKCS12_parse(p12, $0, &key, &certificate, &authorities) }
            guard parsed == 1, let key, let certificate else {
                let errors = OpenSSLErrors.take()
                if case let .failure(detail) = legacy {
                    throw TLSError.pkcs12LegacyProviderMissing(path: path, detail: detail.description)
                }
                throw TLSError.unusableFile(path: path, reason: "cannot decrypt the certificate or key: \(errors.reasonText)")
            }
            var chain: [OpaquePointer] = []
            if let authorities {
                for index in 0..<apnsbulk_sk_X509_num(authorities) {
                    if let authority = apnsbulk_sk_X509_value(authorities, index), X509_up_ref(authority) == 1 {
                        chain.append(authority)
                    }
                }
                apnsbulk_sk_X509_pop_free(authorities)
            }
            return TLSIdentity(certificate: certificate, privateKey: key, chain: chain)
        }
    }

    /// The password that verifies the file's MAC, or nil. An empty password may be stored either
    /// as "" or as none at all, so both are tried (as `openssl pkcs12` does).
    private static func macPassword(_ p12: OpaquePointer, _ password: String) -> String? {
        if password.withCString({ PKCS12_verify_mac(p12, $0, -1) }) == 1 { return password }
        if password.isEmpty, PKCS12_verify_mac(p12, nil, 0) == 1 { return password }
        return nil
    }
}

/// OpenSSL's `legacy` provider (RC2, 3DES-era PBEs), loaded once per process alongside `default`
/// (loading any provider explicitly stops OpenSSL from loading `default` by itself).
enum LegacyProvider {
    static let status: Result<Void, LoadFailure> = {
        _ = OSSL_PROVIDER_load(nil, "default")
        guard OSSL_PROVIDER_load(nil, "legacy") != nil else {
            return .failure(LoadFailure(OpenSSLErrors.take().reasonText))
        }
        return .success(())
    }()

    struct LoadFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
