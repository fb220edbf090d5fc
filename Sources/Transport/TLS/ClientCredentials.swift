/// How the user gave a client certificate for APNs certificate authentication: the paths and the
/// password as typed, loaded into a `TLSIdentity` when a run starts.
public enum ClientCredentials: Sendable, Equatable {
    /// `--cert-file C.pem --cert-key-file K.pem`: PEM certificate (chain) and unencrypted PEM key.
    case pem(certificateFile: String, keyFile: String)
    /// `--p12-file F.p12` and its password (may be empty), legacy RC2/3DES exports included.
    case pkcs12(file: String, password: String)

    /// Reads and checks the files. Blocks on file I/O: call it before the reactors start.
    public func load() throws(TLSError) -> TLSIdentity {
        switch self {
        case let .pem(certificateFile, keyFile):
            return try TLSIdentity.load(certificateFile: certificateFile, keyFile: keyFile)
        case let .pkcs12(file, password):
            return try TLSIdentity.load(pkcs12File: file, password: password)
        }
    }
}
