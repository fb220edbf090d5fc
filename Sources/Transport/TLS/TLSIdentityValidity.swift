import COpenSSL

extension TLSIdentity {
    /// Whether the private key belongs to the certificate. A PEM pair is checked as it loads; a
    /// .p12 can hold a key and a certificate that do not match, which only a handshake would show.
    public var keyMatchesCertificate: Bool {
        defer { ERR_clear_error() }
        return X509_check_private_key(certificate, privateKey) == 1
    }

    /// The certificate's validity by this machine's clock: `notAfter` as OpenSSL prints it
    /// ("Nov 25 12:00:00 2027 GMT"), and whether the certificate is expired or not valid yet:
    /// APNs refuses such a certificate in the handshake, so a dry run says so before the night.
    public var validity: (notAfter: String, expired: Bool, notYetValid: Bool) {
        let notAfter = X509_get0_notAfter(certificate)
        let notBefore = X509_get0_notBefore(certificate)
        let text = PEMFile.encode { bio in notAfter.map { ASN1_TIME_print(bio, $0) } ?? 0 }
        // X509_cmp_current_time: -1 when the time is before now, 1 after, 0 on error.
        let expired = notAfter.map { X509_cmp_current_time($0) < 0 } ?? false
        let notYetValid = notBefore.map { X509_cmp_current_time($0) > 0 } ?? false
        return (text, expired, notYetValid)
    }
}
