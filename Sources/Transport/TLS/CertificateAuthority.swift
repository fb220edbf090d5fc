import COpenSSL

/// An ephemeral certificate authority made in memory (P-256, SHA-256): the mock server's TLS
/// without files, and real certificates for tests. Nothing here is meant to outlive the process,
/// except the CA certificate written for `--ca-out`.
///
/// Sendable: immutable after init; issuing only reads the CA key, which OpenSSL allows from any thread.
public final class CertificateAuthority: @unchecked Sendable {
    /// The CA's own certificate and key.
    public let identity: TLSIdentity

    /// A new CA with a fresh P-256 key, valid from now for `validDays`; nothing touches the disk.
    public init(commonName: String = "apns-bulk ephemeral CA", validDays: Int = 30) throws(TLSError) {
        let key = try CertificateAuthority.newKey()
        do {
            let certificate = try CertificateAuthority.sign(
                subject: [("CN", commonName)], publicKey: key, issuer: nil, issuerKey: key, validDays: validDays,
                extensions: [(NID_basic_constraints, "critical,CA:TRUE"),
                             (NID_key_usage, "critical,keyCertSign,cRLSign"),
                             (NID_subject_key_identifier, "hash")])
            identity = TLSIdentity(certificate: certificate, privateKey: key)
        } catch {
            EVP_PKEY_free(key)
            throw error
        }
    }

    /// The CA certificate, PEM-encoded: what a client adds with `--ca-file`.
    public var certificatePEM: String { identity.certificatePEM }

    /// Writes the CA certificate (never the key) to `path`, for `--ca-out`.
    public func writeCertificate(to path: String) throws(TLSError) {
        try PEMFile.write(certificatePEM, to: path, mode: 0o644)
    }

    /// A server certificate for `hosts` (IP literals become IP SANs, names DNS SANs).
    public func issueServerCertificate(hosts: [String] = ["127.0.0.1", "::1", "localhost"],
                                       validDays: Int = 30) throws(TLSError) -> TLSIdentity {
        precondition(!hosts.isEmpty, "a server certificate needs at least one host")
        let names = hosts.map { SocketAddress(ip: $0, port: 0) != nil ? "IP:\($0)" : "DNS:\($0)" }
        return try issue(subject: [("CN", hosts[0])], validDays: validDays,
                         extensions: [(NID_subject_alt_name, names.joined(separator: ",")),
                                      (NID_ext_key_usage, "serverAuth")])
    }

    /// A client certificate for mutual TLS. APNs certificates carry the app's bundle ID as the
    /// subject's UID; pass it as `userID` to make one that looks the same.
    public func issueClientCertificate(commonName: String, userID: String? = nil,
                                       validDays: Int = 30) throws(TLSError) -> TLSIdentity {
        var subject: [(String, String)] = []
        if let userID { subject.append(("UID", userID)) }
        subject.append(("CN", commonName))
        return try issue(subject: subject, validDays: validDays, extensions: [(NID_ext_key_usage, "clientAuth")])
    }

    private func issue(subject: [(String, String)], validDays: Int,
                       extensions: [(Int32, String)]) throws(TLSError) -> TLSIdentity {
        let key = try CertificateAuthority.newKey()
        do {
            let certificate = try CertificateAuthority.sign(
                subject: subject, publicKey: key, issuer: identity.certificate, issuerKey: identity.privateKey,
                validDays: validDays,
                extensions: [(NID_basic_constraints, "critical,CA:FALSE"),
                             (NID_key_usage, "critical,digitalSignature"),
                             (NID_subject_key_identifier, "hash"),
                             (NID_authority_key_identifier, "keyid:always")] + extensions)
            return TLSIdentity(certificate: certificate, privateKey: key)
        } catch {
            EVP_PKEY_free(key)
            throw error
        }
    }

    private static func newKey() throws(TLSError) -> OpaquePointer {
        guard let key = apnsbulk_EVP_EC_gen_p256() else { throw OpenSSLErrors.failure("EVP_EC_gen(P-256)") }
        return key
    }

    /// A signed X509 certificate; `issuer` nil means self-signed.
    private static func sign(subject: [(String, String)], publicKey: OpaquePointer, issuer: OpaquePointer?,
                             issuerKey: OpaquePointer, validDays: Int,
                             extensions: [(Int32, String)]) throws(TLSError) -> OpaquePointer {
        guard let certificate = X509_new() else { throw OpenSSLErrors.failure("X509_new") }
        var ok = X509_set_version(certificate, 2) == 1
        ok = ok && setRandomSerial(certificate)
        // Valid from a day ago: a rehearsal on a machine whose clock is behind the mock's (hours,
        // not days) fails on its provider tokens, as it would against APNs, not on TLS.
        ok = ok && X509_gmtime_adj(X509_getm_notBefore(certificate), -86_400) != nil
        ok = ok && X509_gmtime_adj(X509_getm_notAfter(certificate), validDays * 86_400) != nil
        if let name = X509_NAME_new() {
            for (field, value) in subject {
                ok = ok && X509_NAME_add_entry_by_txt(name, field, MBSTRING_ASC, value, -1, -1, 0) == 1
            }
            ok = ok && X509_set_subject_name(certificate, name) == 1
            X509_NAME_free(name)
        } else {
            ok = false
        }
        let issuerName = issuer.flatMap { X509_get_subject_name($0) } ?? X509_get_subject_name(certificate)
        ok = ok && X509_set_issuer_name(certificate, issuerName) == 1
        ok = ok && X509_set_pubkey(certificate, publicKey) == 1
        var context = X509V3_CTX()
        apnsbulk_X509V3_set_ctx_nodb(&context)
        X509V3_set_ctx(&context, issuer ?? certificate, certificate, nil, nil, 0)
        for (nid, value) in extensions where ok {
            guard let extensionValue = X509V3_EXT_conf_nid(nil, &context, nid, value) else { ok = false; break }
            ok = X509_add_ext(certificate, extensionValue, -1) == 1
            X509_EXTENSION_free(extensionValue)
        }
        ok = ok && X509_sign(certificate, issuerKey, EVP_sha256()) > 0
        guard ok else {
            X509_free(certificate)
            throw OpenSSLErrors.failure("issuing a certificate")
        }
        return certificate
    }

    private static func setRandomSerial(_ certificate: OpaquePointer) -> Bool {
        var bytes = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&bytes, Int32(bytes.count)) == 1 else { return false }
        bytes[0] &= 0x7f
        guard let number = BN_bin2bn(bytes, Int32(bytes.count), nil) else { return false }
        defer { BN_free(number) }
        return BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate)) != nil
    }
}
