import COpenSSL
import Glibc

/// A certificate, its private key and any intermediate certificates: what a TLS side presents
/// (a client certificate for APNs, a server certificate for the mock).
///
/// Sendable: immutable after init; OpenSSL reference-counts the X509/EVP_PKEY objects and only
/// reads them when contexts are built or certificates signed, which is safe from any thread.
public final class TLSIdentity: @unchecked Sendable {
    let certificate: OpaquePointer  // X509*
    let privateKey: OpaquePointer  // EVP_PKEY*
    let chain: [OpaquePointer]  // X509*, intermediates in order

    /// Takes ownership of one reference to each pointer.
    init(certificate: OpaquePointer, privateKey: OpaquePointer, chain: [OpaquePointer] = []) {
        self.certificate = certificate
        self.privateKey = privateKey
        self.chain = chain
    }

    deinit {
        X509_free(certificate)
        EVP_PKEY_free(privateKey)
        for certificate in chain { X509_free(certificate) }
    }

    /// Loads a PEM certificate file (the leaf first, then any intermediates) and an unencrypted
    /// PEM private key file, and checks that they belong together.
    public static func load(certificateFile: String, keyFile: String) throws(TLSError) -> TLSIdentity {
        let certificates = try PEMFile.certificates(at: certificateFile)
        let key: OpaquePointer
        do {
            key = try PEMFile.privateKey(at: keyFile)
        } catch {
            certificates.forEach { X509_free($0) }
            throw error
        }
        let identity = TLSIdentity(certificate: certificates[0], privateKey: key, chain: Array(certificates.dropFirst()))
        guard X509_check_private_key(identity.certificate, identity.privateKey) == 1 else {
            ERR_clear_error()
            throw TLSError.certificateKeyMismatch(certificatePath: certificateFile, keyPath: keyFile)
        }
        return identity
    }

    /// The certificate's subject, e.g. "/UID=com.example.app/CN=Apple Push Services: com.example.app".
    public var subject: String { TLSIdentity.subject(of: certificate) }

    /// The certificate alone, PEM-encoded (public; safe to print).
    public var certificatePEM: String { PEMFile.encode { PEM_write_bio_X509($0, certificate) } }

    /// Writes the certificate (and chain) and the unencrypted private key as PEM files; the key
    /// file is created readable by its owner only.
    public func writePEM(certificatePath: String, privateKeyPath: String) throws(TLSError) {
        var certificates = certificatePEM
        for intermediate in chain { certificates += PEMFile.encode { PEM_write_bio_X509($0, intermediate) } }
        try PEMFile.write(certificates, to: certificatePath, mode: 0o644)
        let key = PEMFile.encode { PEM_write_bio_PrivateKey($0, privateKey, nil, nil, 0, nil, nil) }
        try PEMFile.write(key, to: privateKeyPath, mode: 0o600)
    }

    static func subject(of certificate: OpaquePointer) -> String {
        guard let name = X509_get_subject_name(certificate),
              let line = X509_NAME_oneline(name, nil, 0) else { return "" }
        defer { apnsbulk_OPENSSL_free(line) }
        return String(cString: line)
    }
}

/// Reading and writing PEM files for the TLS types, with errors that name the file.
enum PEMFile {
    static func read(_ path: String) throws(TLSError) -> [UInt8] {
        guard let file = fopen(path, "rb") else {
            throw TLSError.unusableFile(path: path, reason: "cannot open: \(SocketError.text(errno))")
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            bytes.append(contentsOf: chunk.prefix(count))
            if count < chunk.count { break }
        }
        guard ferror(file) == 0 else {
            throw TLSError.unusableFile(path: path, reason: "cannot read: \(SocketError.text(errno))")
        }
        return bytes
    }

    static func write(_ text: String, to path: String, mode: mode_t) throws(TLSError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else {
            throw TLSError.unusableFile(path: path, reason: "cannot create: \(SocketError.text(errno))")
        }
        defer { close(fd) }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else {
                throw TLSError.unusableFile(path: path, reason: "cannot write: \(SocketError.text(errno))")
            }
            bytes = bytes.dropFirst(written)
        }
    }

    /// Calls `body` with a read-only memory BIO over `bytes`.
    static func withBIO<Result>(_ bytes: [UInt8], _ body: (OpaquePointer) throws(TLSError) -> Result) throws(TLSError) -> Result {
        let bio: OpaquePointer? = bytes.withUnsafeBytes { BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }
        guard let bio else { throw OpenSSLErrors.failure("BIO_new_mem_buf") }
        defer { BIO_free(bio) }
        // The BIO points into `bytes`, which stays alive for this call.
        return try withExtendedLifetime(bytes) { () throws(TLSError) -> Result in try body(bio) }
    }

    /// Every certificate in a PEM file, the first one being the leaf. Never empty.
    static func certificates(at path: String) throws(TLSError) -> [OpaquePointer] {
        let bytes = try read(path)
        return try withBIO(bytes) { bio throws(TLSError) in
            var certificates: [OpaquePointer] = []
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                certificates.append(certificate)
            }
            ERR_clear_error()  // the loop ends on "no start line"
            guard !certificates.isEmpty else {
                throw TLSError.unusableFile(path: path, reason: "no PEM certificate in it (expected a "
                                            + "-----BEGIN CERTIFICATE----- block)")
            }
            return certificates
        }
    }

    /// An unencrypted PEM private key. Never prompts for a passphrase.
    static func privateKey(at path: String) throws(TLSError) -> OpaquePointer {
        let bytes = try read(path)
        return try withBIO(bytes) { bio throws(TLSError) in
            var empty: CChar = 0  // an empty passphrase stops OpenSSL from asking on the terminal
            guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, &empty) else {
                ERR_clear_error()
                let text = String(decoding: bytes, as: UTF8.self)
                if text.contains("ENCRYPTED") {
                    throw TLSError.unusableFile(path: path, reason: "the private key is encrypted; give an unencrypted "
                                                + "key (openssl pkey -in KEY.pem -out KEY-plain.pem)")
                }
                throw TLSError.unusableFile(path: path, reason: "no PEM private key in it (expected a "
                                            + "-----BEGIN PRIVATE KEY----- block)")
            }
            return key
        }
    }

    /// PEM text produced by `write` into a memory BIO.
    static func encode(_ write: (OpaquePointer) -> Int32) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { return "" }
        var data: UnsafeMutablePointer<CChar>?
        let length = apnsbulk_BIO_get_mem_data(bio, &data)
        guard let data, length > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }
}

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

// What a certificate says beyond its key: its extensions by OID and its subject's fields, for a
// caller that knows what its certificates carry (APNs' `PushCertificateClaims`).
extension TLSIdentity {
    /// The value of the certificate's extension `oid` (dotted text, "1.2.840.113635.100.6.3.6"):
    /// its bytes (DER, as the issuer wrote them); nil when the certificate has none, or `oid` is none.
    public func extensionBytes(oid: String) -> [UInt8]? {
        Self.extensionData(certificate, oid: oid)
    }

    /// The subject's UID (userId) field; nil when absent or empty.
    public var subjectUserID: String? {
        Self.subjectField(certificate, nid: NID_userId)
    }

    /// What records and messages call the certificate: its subject's CN, else its UID, else the subject.
    public var label: String {
        Self.subjectField(certificate, nid: NID_commonName) ?? Self.subjectField(certificate, nid: NID_userId) ?? subject
    }

    private static func subjectField(_ certificate: OpaquePointer, nid: Int32) -> String? {
        guard let name = X509_get_subject_name(certificate) else { return nil }
        let index = X509_NAME_get_index_by_NID(name, nid, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index),
              let data = X509_NAME_ENTRY_get_data(entry) else { return nil }
        let text = bytes(of: data).map { String(decoding: $0, as: UTF8.self) }
        return text?.isEmpty == false ? text : nil
    }

    private static func extensionData(_ certificate: OpaquePointer, oid: String) -> [UInt8]? {
        guard let object = OBJ_txt2obj(oid, 1) else { return nil }
        defer { ASN1_OBJECT_free(object) }
        let index = X509_get_ext_by_OBJ(certificate, object, -1)
        guard index >= 0, let item = X509_get_ext(certificate, index), let data = X509_EXTENSION_get_data(item) else {
            return nil
        }
        return bytes(of: data)
    }

    private static func bytes(of string: UnsafeMutablePointer<ASN1_STRING>) -> [UInt8]? {
        let length = Int(ASN1_STRING_length(string))
        guard length >= 0, let start = ASN1_STRING_get0_data(string) else { return nil }
        return Array(UnsafeBufferPointer(start: start, count: length))
    }
}
