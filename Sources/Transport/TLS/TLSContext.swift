import COpenSSL

/// Certificates to trust in addition to (client) or instead of (server, for client certificates)
/// the system's store.
public enum TLSTrust: Sendable {
    /// A PEM file of one or more CA certificates (`--ca-file`).
    case caFile(String)
    /// An in-memory CA (the embedded mock server's).
    case authority(CertificateAuthority)
    /// The issuer of this identity's certificate (the certificates that follow the leaf in its
    /// file), or the certificate itself when it came alone (self-signed, or its issuer left out):
    /// how `send --endpoint mock` trusts the client certificate a rehearsal is given. Chains may
    /// end at these certificates without reaching a root (X509_V_FLAG_PARTIAL_CHAIN); validity
    /// dates and signatures are checked as for any chain.
    case issuerOf(TLSIdentity)
    /// `issuerOf` each of several identities: a rehearsal given several client certificates.
    case issuersOf([TLSIdentity])
}

/// How a server context behaves beyond its certificate.
public struct TLSServerOptions: Sendable {
    /// ALPN protocols the server selects, in its order of preference. A client that offers none
    /// of them, or no ALPN at all, still gets a connection (without a selected protocol).
    public var alpnProtocols: [String]
    /// When set, a client certificate issued by these CAs is required (mutual TLS).
    public var clientCertificateTrust: TLSTrust?
    /// Tests only: offer nothing newer than TLS 1.1, at security level 0 so OpenSSL really
    /// offers it (a client must refuse such a server).
    public var onlyTLS11ForTesting: Bool

    /// Options; the defaults select h2 and ask no client certificate.
    public init(alpnProtocols: [String] = ["h2"], clientCertificateTrust: TLSTrust? = nil,
                onlyTLS11ForTesting: Bool = false) {
        self.alpnProtocols = alpnProtocols
        self.clientCertificateTrust = clientCertificateTrust
        self.onlyTLS11ForTesting = onlyTLS11ForTesting
    }
}

/// An OpenSSL `SSL_CTX` set up once for one side; every `TLSSession` is made from one.
///
/// Client: TLS 1.2 or newer, ALPN `h2` offered and required, peer verification always on against
/// the system trust store plus any `additionalTrust`, an optional client certificate.
/// Server: a certificate, ALPN selection from `TLSServerOptions`, optional mutual TLS.
///
/// Sendable: configured in init and never changed; OpenSSL allows creating sessions from one
/// SSL_CTX on several threads, so a pool shares one context across its reactors.
public final class TLSContext: @unchecked Sendable {
    let context: OpaquePointer  // SSL_CTX*
    /// Which side's sessions this context makes.
    public let isServer: Bool
    /// Server ALPN preferences, each as its wire bytes (without the length prefix).
    private let serverProtocols: [[UInt8]]
    /// Where a client context reads the system's roots from (set once, in `client`).
    private(set) var systemTrust: SystemTrust.Source?
    /// A client context that offers h2 and requires the server to select it (all but the
    /// retired binary protocols', which speak raw bytes over TLS).
    private(set) var requiresH2 = true

    private init(context: OpaquePointer, isServer: Bool, serverProtocols: [[UInt8]]) {
        self.context = context
        self.isServer = isServer
        self.serverProtocols = serverProtocols
    }

    deinit { SSL_CTX_free(context) }

    /// A client context for APNs-style servers.
    /// `offersH2` false: no ALPN at all, for Apple's retired binary provider API and feedback service.
    public static func client(additionalTrust: TLSTrust? = nil,
                              identity: TLSIdentity? = nil, offersH2: Bool = true) throws(TLSError) -> TLSContext {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw OpenSSLErrors.failure("SSL_CTX_new") }
        let tls = TLSContext(context: context, isServer: false, serverProtocols: [])
        try tls.applyCommonSettings()
        guard apnsbulk_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            throw OpenSSLErrors.failure("SSL_CTX_set_min_proto_version")
        }
        // Read-ahead: one read() takes every record the socket holds (up to the read buffer)
        // instead of two per record (header, then body). SSL_has_pending sees what it keeps.
        apnsbulk_SSL_CTX_set_read_ahead(context, 1)
        SSL_CTX_set_default_read_buffer_len(context, 64 * 1024)
        // Verification is always on: extra trust adds CAs, nothing removes the check.
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        tls.systemTrust = try SystemTrust.install(in: context)
        if let additionalTrust { try tls.trust(additionalTrust) }
        tls.requiresH2 = offersH2
        let h2: [UInt8] = [2, UInt8(ascii: "h"), UInt8(ascii: "2")]
        guard !offersH2 || SSL_CTX_set_alpn_protos(context, h2, UInt32(h2.count)) == 0 else {
            throw OpenSSLErrors.failure("SSL_CTX_set_alpn_protos")
        }
        if let identity { try tls.use(identity, source: "the client certificate") }
        return tls
    }

    /// A server context presenting `identity`.
    public static func server(identity: TLSIdentity,
                              options: TLSServerOptions = TLSServerOptions()) throws(TLSError) -> TLSContext {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw OpenSSLErrors.failure("SSL_CTX_new") }
        let protocols = options.alpnProtocols.map { Array($0.utf8) }.filter { !$0.isEmpty && $0.count < 256 }
        let tls = TLSContext(context: context, isServer: true, serverProtocols: protocols)
        try tls.applyCommonSettings()
        if options.onlyTLS11ForTesting {
            SSL_CTX_set_security_level(context, 0)
            _ = SSL_CTX_set_cipher_list(context, "DEFAULT:@SECLEVEL=0")
            _ = apnsbulk_SSL_CTX_set_min_proto_version(context, TLS1_VERSION)
            _ = apnsbulk_SSL_CTX_set_max_proto_version(context, TLS1_1_VERSION)
        } else {
            _ = apnsbulk_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION)
        }
        try tls.use(identity, source: "the server certificate")
        if let trust = options.clientCertificateTrust {
            try tls.trust(trust, advertise: true)
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
        }
        SSL_CTX_set_alpn_select_cb(context, { _, out, outLength, offered, offeredLength, argument in
            guard let argument, let out, let outLength, let offered else { return SSL_TLSEXT_ERR_NOACK }
            let tls = Unmanaged<TLSContext>.fromOpaque(argument).takeUnretainedValue()
            let list = UnsafeBufferPointer(start: offered, count: Int(offeredLength))
            guard let (start, length) = tls.selectProtocol(from: list) else { return SSL_TLSEXT_ERR_NOACK }
            out.pointee = offered + start  // points into the client's list, as OpenSSL requires
            outLength.pointee = length
            return SSL_TLSEXT_ERR_OK
        }, Unmanaged.passUnretained(tls).toOpaque())
        return tls
    }

    /// The first server preference the client offered: its offset and length in `offered`.
    private func selectProtocol(from offered: UnsafeBufferPointer<UInt8>) -> (Int, UInt8)? {
        for preferred in serverProtocols {
            var index = 0
            while index < offered.count {
                let length = Int(offered[index])
                let start = index + 1
                guard start + length <= offered.count else { break }
                if length == preferred.count, offered[start..<start + length].elementsEqual(preferred) {
                    return (start, UInt8(length))
                }
                index = start + length
            }
        }
        return nil
    }

    private func applyCommonSettings() throws(TLSError) {
        // One SSL_write per batch: partial writes let a big batch go out as the socket takes it,
        // and a moving buffer lets the output queue grow between a would-block and its retry.
        _ = apnsbulk_SSL_CTX_set_mode(context, apnsbulk_SSL_MODE_ENABLE_PARTIAL_WRITE()
                                      | apnsbulk_SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER())
        _ = SSL_CTX_set_options(context, UInt64(apnsbulk_SSL_OP_NO_RENEGOTIATION()))
    }

    private func trust(_ trust: TLSTrust, advertise: Bool = false) throws(TLSError) {
        var certificates: [OpaquePointer] = []
        switch trust {
        case let .caFile(path):
            certificates = try PEMFile.certificates(at: path)
        case let .authority(authority):
            guard X509_up_ref(authority.identity.certificate) == 1 else { throw OpenSSLErrors.failure("X509_up_ref") }
            certificates = [authority.identity.certificate]
        case let .issuerOf(identity):
            certificates = try Self.issuers(of: [identity])
        case let .issuersOf(identities):
            certificates = try Self.issuers(of: identities)
        }
        defer { certificates.forEach { X509_free($0) } }
        guard let store = SSL_CTX_get_cert_store(context) else { throw OpenSSLErrors.failure("SSL_CTX_get_cert_store") }
        switch trust {
        case .issuerOf, .issuersOf: _ = X509_STORE_set_flags(store, UInt(X509_V_FLAG_PARTIAL_CHAIN))
        case .caFile, .authority: break
        }
        for certificate in certificates {
            // A CA already in the store (the same file given twice) is not an error.
            _ = X509_STORE_add_cert(store, certificate)
            if advertise { _ = SSL_CTX_add_client_CA(context, certificate) }
        }
        ERR_clear_error()
    }

    /// The certificates after each leaf in its file, or the leaf itself when it came alone; one
    /// reference each, for the caller to free.
    private static func issuers(of identities: [TLSIdentity]) throws(TLSError) -> [OpaquePointer] {
        var certificates: [OpaquePointer] = []
        for identity in identities {
            for certificate in identity.chain.isEmpty ? [identity.certificate] : identity.chain {
                guard X509_up_ref(certificate) == 1 else {
                    certificates.forEach { X509_free($0) }
                    throw OpenSSLErrors.failure("X509_up_ref")
                }
                certificates.append(certificate)
            }
        }
        return certificates
    }

    private func use(_ identity: TLSIdentity, source: String) throws(TLSError) {
        guard let chain = apnsbulk_sk_X509_new_null() else { throw OpenSSLErrors.failure("sk_X509_new_null") }
        defer { apnsbulk_sk_X509_pop_free(chain) }
        for certificate in identity.chain where X509_up_ref(certificate) == 1 {
            if apnsbulk_sk_X509_push(chain, certificate) <= 0 { X509_free(certificate) }
        }
        guard SSL_CTX_use_cert_and_key(context, identity.certificate, identity.privateKey, chain, 1) == 1,
              SSL_CTX_check_private_key(context) == 1 else {
            throw TLSError.openSSL(operation: "using \(source)", detail: OpenSSLErrors.take().reasonText)
        }
    }
}
