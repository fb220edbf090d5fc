import COpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// The system's CA certificates, as OpenSSL's defaults name them, put in a client context.
///
/// `SSL_CTX_set_default_verify_paths` parses the whole default bundle (Debian's
/// ca-certificates.crt: ~140 certificates) on every start, about 225 M instructions, which is
/// more than sending 4,000 notifications. Where the default certificate directory is hashed (as
/// `update-ca-certificates` and `openssl rehash` leave it), OpenSSL can instead read just the one
/// root a handshake asks for, by subject hash, when it asks. So: the directory alone when it is
/// hashed and `SSL_CERT_FILE` names no bundle but the default one (many images set it to that very
/// file); otherwise both defaults, as before. Either way verification stays on; only where the
/// roots are read from changes.
enum SystemTrust {
    /// How a context was given the system's roots.
    enum Source: Equatable {
        /// The default directory only, read lazily by subject hash.
        case hashedDirectory
        /// The default bundle file and directory, the bundle parsed now.
        case defaultPaths
    }

    static func install(in context: OpaquePointer) throws(TLSError) -> Source {
        let source = choose(certificateFile: environment(X509_get_default_cert_file_env()),
                            defaultFile: String(cString: X509_get_default_cert_file()),
                            directories: certificateDirectories())
        if source == .hashedDirectory {
            guard SSL_CTX_set_default_verify_dir(context) == 1 else {
                throw OpenSSLErrors.failure("SSL_CTX_set_default_verify_dir")
            }
            return .hashedDirectory
        }
        guard SSL_CTX_set_default_verify_paths(context) == 1 else {
            throw OpenSSLErrors.failure("SSL_CTX_set_default_verify_paths")
        }
        return .defaultPaths
    }

    /// The lazy directory when `directories` are hashed and `certificateFile` (`SSL_CERT_FILE`) is
    /// unset or the same file as OpenSSL's default bundle.
    static func choose(certificateFile: String?, defaultFile: String, directories: [String]) -> Source {
        if let certificateFile, resolved(certificateFile) != resolved(defaultFile) { return .defaultPaths }
        return hasHashedEntries(directories: directories) ? .hashedDirectory : .defaultPaths
    }

    /// The path with every symbolic link resolved, or itself when it cannot be.
    private static func resolved(_ path: String) -> String {
        guard let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }

    /// `SSL_CERT_DIR` (colon-separated, as OpenSSL reads it) or OpenSSL's built-in directory.
    static func certificateDirectories() -> [String] {
        let list = environment(X509_get_default_cert_dir_env()) ?? String(cString: X509_get_default_cert_dir())
        return list.split(separator: ":").map(String.init)
    }

    /// Whether any of `directories` holds an entry named as `openssl rehash` names them
    /// (`3513523f.0`: eight hex digits, a dot, a number).
    static func hasHashedEntries(directories: [String]) -> Bool {
        directories.contains { directory in
            guard let stream = opendir(directory) else { return false }
            defer { closedir(stream) }
            while let entry = readdir(stream) {
                let found = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    isHashedName(raw.prefix { $0 != 0 })
                }
                if found { return true }
            }
            return false
        }
    }

    static func isHashedName(_ name: some Collection<UInt8>) -> Bool {
        let bytes = Array(name)
        guard bytes.count >= 10, bytes[8] == UInt8(ascii: ".") else { return false }
        let isHex = { (byte: UInt8) in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
        }
        return bytes[..<8].allSatisfy(isHex) && bytes[9...].allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    private static func environment(_ name: UnsafePointer<CChar>?) -> String? {
        guard let name, let value = getenv(name), value.pointee != 0 else { return nil }
        return String(cString: value)
    }
}
