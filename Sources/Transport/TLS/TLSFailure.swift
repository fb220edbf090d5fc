import COpenSSL
import Glibc

/// Turns OpenSSL's view of a failed handshake, read or write into the `TLSError` a user can act on.
enum TLSFailure {
    private static let versionReasons: Set<Int32> = [
        SSL_R_UNSUPPORTED_PROTOCOL, SSL_R_TLSV1_ALERT_PROTOCOL_VERSION, SSL_R_NO_PROTOCOLS_AVAILABLE,
        SSL_R_UNSUPPORTED_SSL_VERSION, SSL_R_VERSION_TOO_LOW,
    ]

    /// Alerts a server sends about the client's certificate.
    private static let clientCertificateAlerts: Set<Int32> = [
        SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED, SSL_R_SSLV3_ALERT_BAD_CERTIFICATE,
        SSL_R_TLSV1_ALERT_UNKNOWN_CA, SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN,
        SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED, SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED,
        SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE,
    ]

    static func classify(ssl: OpaquePointer, sslError: Int32, errno code: Int32, errors: OpenSSLErrors,
                         peer: String, isServer: Bool, duringHandshake: Bool) -> TLSError {
        if errors.library == ERR_LIB_SSL {
            let reason = errors.reason
            if reason == SSL_R_CERTIFICATE_VERIFY_FAILED {
                let result = Int32(SSL_get_verify_result(ssl))
                if !isServer, result == X509_V_ERR_HOSTNAME_MISMATCH || result == X509_V_ERR_IP_ADDRESS_MISMATCH {
                    return hasSubjectAltName(ssl) ? .hostnameMismatch(peer: peer) : .noSubjectAltName(peer: peer)
                }
                if !isServer, result == X509_V_ERR_CERT_NOT_YET_VALID, let notBefore = futureNotBefore(ssl) {
                    return .certificateNotYetValid(peer: peer, notBefore: notBefore, now: currentTime())
                }
                let text = X509_verify_cert_error_string(Int(result)).map { String(cString: $0) } ?? errors.reasonText
                return .certificateVerificationFailed(peer: isServer ? "client \(peer)" : peer, reason: text)
            }
            if versionReasons.contains(reason) {
                guard isServer else { return .protocolVersionRefused(peer: peer, detail: errors.reasonText) }
                return .handshakeFailed(peer: peer, detail: "no TLS version both sides accept (\(errors.reasonText))")
            }
            if isServer, reason == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE {
                return .clientCertificateMissing(peer: peer)
            }
            if !isServer, reason == SSL_R_TLSV1_ALERT_NO_APPLICATION_PROTOCOL {
                // The server refused our ALPN offer (alert 120): it serves no HTTP/2 here.
                return .alpnNotNegotiated(peer: peer)
            }
            if !isServer, clientCertificateAlerts.contains(reason) {
                return .clientCertificateRejected(peer: peer, detail: errors.reasonText)
            }
            if reason == SSL_R_UNEXPECTED_EOF_WHILE_READING {
                return failed(peer, "the peer closed the connection", duringHandshake)
            }
        }
        if sslError == SSL_ERROR_SYSCALL {
            return failed(peer, code == 0 ? "the peer closed the connection" : SocketError.text(code), duringHandshake)
        }
        if sslError == SSL_ERROR_ZERO_RETURN {
            return failed(peer, "the peer closed the connection", duringHandshake)
        }
        return failed(peer, errors.text, duringHandshake)
    }

    /// Whether the server's certificate has a subjectAltName. A failed verification leaves no
    /// peer certificate, but the chain the server sent (leaf first) is kept.
    private static func hasSubjectAltName(_ ssl: OpaquePointer) -> Bool {
        guard let chain = SSL_get_peer_cert_chain(ssl), OPENSSL_sk_num(chain) > 0,
              let leaf = OPENSSL_sk_value(chain, 0) else { return true }
        return X509_get_ext_by_NID(OpaquePointer(leaf), NID_subject_alt_name, -1) >= 0
    }

    /// The notBefore of the first certificate of the chain the server sent that starts after this
    /// machine's now, as OpenSSL prints it ("Dec  1 10:00:00 2026 GMT").
    private static func futureNotBefore(_ ssl: OpaquePointer) -> String? {
        guard let chain = SSL_get_peer_cert_chain(ssl) else { return nil }
        for index in 0..<OPENSSL_sk_num(chain) {
            guard let certificate = OPENSSL_sk_value(chain, index),
                  let notBefore = X509_get0_notBefore(OpaquePointer(certificate)),
                  X509_cmp_current_time(notBefore) > 0 else { continue }
            return PEMFile.encode { bio in ASN1_TIME_print(bio, notBefore) }
        }
        return nil
    }

    /// This machine's time, as OpenSSL prints a certificate's.
    private static func currentTime() -> String {
        guard let now = ASN1_TIME_set(nil, time(nil)) else { return "unknown" }
        defer { ASN1_STRING_free(now) }
        return PEMFile.encode { bio in ASN1_TIME_print(bio, now) }
    }

    /// What a server answered instead of a TLS record, from the first 5 bytes it sent: "in plain
    /// HTTP" for "HTTP/", the bytes as text when they are printable, in hex otherwise.
    static func notTLSAnswer(_ header: [UInt8]) -> String {
        if header.starts(with: Array("HTTP/".utf8)) { return "in plain HTTP" }
        if header.allSatisfy({ (0x20..<0x7f).contains($0) || $0 == 0x0d || $0 == 0x0a }) {
            let text = header.map { $0 == 0x0d ? "\\r" : $0 == 0x0a ? "\\n" : String(UnicodeScalar($0)) }.joined()
            return "with \"\(text)...\""
        }
        let hex = "0123456789abcdef".map { $0 }
        return "with bytes " + header.map { "\(hex[Int($0 >> 4)])\(hex[Int($0 & 15)])" }.joined(separator: " ")
    }

    /// Whether a record header (content type, version) cannot start a TLS 1.0-1.3 record.
    static func isNotTLS(_ header: [UInt8]) -> Bool {
        guard header.count >= 3 else { return false }
        return !(20...24).contains(header[0]) || header[1] != 3
    }

    private static func failed(_ peer: String, _ detail: String, _ duringHandshake: Bool) -> TLSError {
        duringHandshake ? .handshakeFailed(peer: peer, detail: detail) : .connectionFailed(peer: peer, detail: detail)
    }
}
