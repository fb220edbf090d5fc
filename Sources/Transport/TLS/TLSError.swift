import COpenSSL

/// A TLS failure, or a certificate/key file that cannot be used, said so a user can fix it.
/// `peer` is the host the user named (client side) or the client's address (server side).
public enum TLSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The peer's certificate chain did not verify; `reason` is OpenSSL's (X509_verify_cert_error_string).
    case certificateVerificationFailed(peer: String, reason: String)
    /// A certificate of the server's chain starts (`notBefore`, as OpenSSL prints it) after `now`,
    /// this machine's time: most likely this machine's clock is behind.
    case certificateNotYetValid(peer: String, notBefore: String, now: String)
    /// The certificate verified but is not issued for the host name or IP address connected to.
    case hostnameMismatch(peer: String)
    /// The certificate has no subjectAltName: names are checked against it only (RFC 9525), never
    /// against the subject's CN.
    case noSubjectAltName(peer: String)
    /// The server answered the TLS ClientHello with something that is not TLS; `answer` says what.
    case notTLS(peer: String, answer: String)
    /// The peer offers only TLS versions below 1.2 (or refused ours).
    case protocolVersionRefused(peer: String, detail: String)
    /// The server did not select HTTP/2 through ALPN.
    case alpnNotNegotiated(peer: String)
    case handshakeTimedOut(peer: String, timeout: Duration)
    /// The server asked for a client certificate and refused the one given, or none was given.
    case clientCertificateRejected(peer: String, detail: String)
    /// Server side: the client sent no certificate although one is required.
    case clientCertificateMissing(peer: String)
    /// Any other handshake failure.
    case handshakeFailed(peer: String, detail: String)
    /// Reading or writing an established TLS connection failed.
    case connectionFailed(peer: String, detail: String)
    /// A certificate, key, CA or .p12 file could not be read or used.
    case unusableFile(path: String, reason: String)
    case certificateKeyMismatch(certificatePath: String, keyPath: String)
    case pkcs12WrongPassword(path: String)
    /// The .p12 file is protected by a password and none was given.
    case pkcs12PasswordNeeded(path: String)
    case pkcs12LegacyProviderMissing(path: String, detail: String)
    /// OpenSSL failed where no input is to blame (out of memory, ...).
    case openSSL(operation: String, detail: String)

    /// One line saying what failed, with OpenSSL's detail, and what to check.
    public var description: String {
        switch self {
        case let .certificateVerificationFailed(peer, reason):
            return "TLS certificate of \(peer) could not be verified: \(reason). If the server uses a private CA, "
                + "add that CA with --ca-file CA.pem (verification itself cannot be turned off)"
        case let .certificateNotYetValid(peer, notBefore, now):
            return "TLS certificate of \(peer) is not valid yet: its notBefore (\(notBefore)) is in the future by this "
                + "machine's clock (now \(now)): check this machine's clock (date, NTP); --ca-file does not help with this"
        case let .hostnameMismatch(peer):
            return "TLS certificate of \(peer) is not issued for that host name or address (hostname mismatch); "
                + "check the --endpoint host"
        case let .noSubjectAltName(peer):
            return "TLS certificate of \(peer) has no subjectAltName, so it names no host: certificates are matched "
                + "against their subjectAltName only (RFC 9525), never the CN; the server needs a certificate "
                + "with a subjectAltName for the --endpoint host"
        case let .notTLS(peer, answer):
            return "\(peer) answered \(answer), not TLS; check the --endpoint port (APNs listens for TLS on 443)"
        case let .protocolVersionRefused(peer, detail):
            return "\(peer) speaks only TLS older than 1.2, which apns-bulk refuses (\(detail))"
        case let .alpnNotNegotiated(peer):
            return "\(peer): server did not negotiate HTTP/2 (ALPN h2); APNs endpoints always do, "
                + "so check that --endpoint names an APNs server"
        case let .handshakeTimedOut(peer, timeout):
            return "TLS handshake with \(peer) did not finish within \(SocketError.milliseconds(timeout)) ms"
        case let .clientCertificateRejected(peer, detail):
            return "\(peer) refused the client certificate (\(detail)); check --cert-file/--p12-file "
                + "and that the certificate is for this environment (production or sandbox)"
        case let .clientCertificateMissing(peer):
            return "client \(peer) sent no TLS client certificate, but this server requires one"
        case let .handshakeFailed(peer, detail):
            return "TLS handshake with \(peer) failed: \(detail)"
        case let .connectionFailed(peer, detail):
            return "TLS connection with \(peer) failed: \(detail)"
        case let .unusableFile(path, reason):
            return "\(path): \(reason)"
        case let .certificateKeyMismatch(certificatePath, keyPath):
            return "the private key in \(keyPath) does not belong to the certificate in \(certificatePath)"
        case let .pkcs12WrongPassword(path):
            return "\(path): wrong password for this .p12 file (check the password given with it)"
        case let .pkcs12PasswordNeeded(path):
            return "\(path): this .p12 file is protected by a password and none was given; put the password in an "
                + "environment variable and name the variable with --p12-password-env VAR"
        case let .pkcs12LegacyProviderMissing(path, detail):
            return "\(path) is encrypted with a legacy algorithm (RC2/3DES, as Keychain exports it) and OpenSSL's "
                + "'legacy' provider could not be loaded (\(detail)); install OpenSSL's legacy module "
                + "(ossl-modules/legacy.so, or set OPENSSL_MODULES) or convert the file to PEM with "
                + "`openssl pkcs12 -legacy -in FILE.p12 -nodes`"
        case let .openSSL(operation, detail):
            return "OpenSSL failed in \(operation): \(detail)"
        }
    }
}

/// OpenSSL's per-thread error queue, read once and emptied.
struct OpenSSLErrors {
    /// Library and reason of the first (oldest) error, 0 when the queue was empty.
    let library: Int32
    let reason: Int32
    let firstCode: UInt
    /// Every queued error's text, joined.
    let text: String

    static func take() -> OpenSSLErrors {
        var library: Int32 = 0
        var reason: Int32 = 0
        var firstCode: UInt = 0
        var texts: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            if texts.isEmpty {
                firstCode = code
                library = ERR_GET_LIB(code)
                reason = ERR_GET_REASON(code)
            }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            texts.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return OpenSSLErrors(library: library, reason: reason, firstCode: firstCode,
                             text: texts.isEmpty ? "no detail from OpenSSL" : texts.joined(separator: "; "))
    }

    /// The reason string of the first error alone ("unsupported protocol"), or the full text.
    var reasonText: String {
        guard firstCode != 0, let text = ERR_reason_error_string(firstCode) else {
            return self.text
        }
        return String(cString: text)
    }

    static func failure(_ operation: String) -> TLSError {
        .openSSL(operation: operation, detail: take().text)
    }
}
