/// Why a signing key could not be loaded or used. Each message names the file (or the PEM text)
/// and says what to do about it.
public enum SigningKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    case fileNotFound(path: String)
    case permissionDenied(path: String)
    case isDirectory(path: String)
    case unreadable(path: String, detail: String)
    case tooLarge(source: String, bytes: Int)
    case notPEM(source: String)
    case notAPrivateKey(source: String, label: String)
    case encrypted(source: String)
    case rsaKey(source: String)
    case unsupportedKeyType(source: String, type: String)
    case wrongCurve(source: String, curve: String)
    case invalidKey(source: String, detail: String)
    /// OpenSSL failed at something that works with any valid key (signing, exporting).
    case openSSL(operation: String, detail: String)

    /// The largest file accepted as a key; a .p8 is about 250 bytes.
    static let maximumFileSize = 64 * 1024

    /// The same text as `message`.
    public var description: String { message }

    /// What is wrong with the key file and what to give instead; never the key's contents.
    public var message: String {
        switch self {
        case .fileNotFound(let path):
            "key file \"\(path)\" does not exist: pass the path of the .p8 file you downloaded from your Apple Developer account (Certificates, Identifiers & Profiles → Keys)"
        case .permissionDenied(let path):
            "key file \"\(path)\" cannot be read by this user (permission denied): make it readable to the user running apns-bulk, e.g. `chmod 600 \"\(path)\"` as its owner"
        case .isDirectory(let path):
            "key file \"\(path)\" is a directory: pass the path of the .p8 file itself"
        case .unreadable(let path, let detail):
            "key file \"\(path)\" cannot be read (\(detail)): check the path and that the file is a regular, readable file"
        case .tooLarge(let source, let bytes):
            "\(source) is \(bytes) bytes, far too large for a key (an APNs .p8 file is about 250 bytes): pass the .p8 file itself"
        case .notPEM(let source):
            "\(source) is not a PEM key (no \"-----BEGIN PRIVATE KEY-----\" line): pass the .p8 file exactly as downloaded from Apple; a DER key converts with `openssl pkey -inform DER -in KEY.der -out KEY.p8`"
        case .notAPrivateKey(let source, let label):
            "\(source) holds a \(label), not a private key: pass the .p8 private key from Apple (it starts with \"-----BEGIN PRIVATE KEY-----\")"
        case .encrypted(let source):
            "\(source) is an encrypted private key, but APNs .p8 keys from Apple are not encrypted: decrypt it once with `openssl pkey -in ENCRYPTED.p8 -out KEY.p8` (it asks for the passphrase) and pass KEY.p8"
        case .rsaKey(let source):
            "\(source) holds an RSA key, but provider tokens are signed with ES256, which needs the P-256 EC key (.p8) Apple gives you under Keys (an RSA key belongs with a certificate: use --cert-file and --cert-key-file for certificate authentication)"
        case .unsupportedKeyType(let source, let type):
            "\(source) holds a key of type \(type), but provider tokens are signed with ES256, which needs the P-256 EC key (.p8) Apple gives you under Keys"
        case .wrongCurve(let source, let curve):
            "\(source) holds an EC key on curve \(curve), but provider tokens are signed with ES256, which needs a P-256 (prime256v1) key: use the .p8 file Apple gives you under Keys"
        case .invalidKey(let source, let detail):
            "\(source) could not be read as a private key (\(detail)): the file may be damaged; download the key again, or check it with `openssl pkey -noout -in FILE`"
        case .openSSL(let operation, let detail):
            "OpenSSL failed to \(operation) (\(detail))"
        }
    }
}
