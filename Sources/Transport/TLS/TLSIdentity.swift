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
