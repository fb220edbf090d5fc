import COpenSSL
import Foundation
import Testing
import TestSupport
@testable import Transport

/// Where a client context reads the system's CA certificates from.
struct SystemTrustTests {
    @Test func hashedNamesAreEightLowercaseHexDigitsADotAndANumber() {
        let accepted = ["3513523f.0", "002c0b4f.1", "ffffffff.12"]
        let refused = ["3513523F.0", "3513523f.", "3513523f.r0", "3513523f0", "ca-certificates.crt", "513523f.0",
                       "3513523g.0", "3513523f.0.pem", ""]
        for name in accepted { #expect(SystemTrust.isHashedName(Array(name.utf8)), "\(name)") }
        for name in refused { #expect(!SystemTrust.isHashedName(Array(name.utf8)), "\(name)") }
    }

    @Test func aDirectoryCountsAsHashedOnlyWithAHashedEntry() throws {
        let plain = try TemporaryDirectory()
        try Data("x".utf8).write(to: URL(fileURLWithPath: plain.path("ca-certificates.crt")))
        try Data("x".utf8).write(to: URL(fileURLWithPath: plain.path("ACCVRAIZ1.pem")))
        #expect(!SystemTrust.hasHashedEntries(directories: [plain.path]))
        #expect(!SystemTrust.hasHashedEntries(directories: [plain.path + "/missing"]))

        let hashed = try TemporaryDirectory()
        try Data("x".utf8).write(to: URL(fileURLWithPath: hashed.path("3513523f.0")))
        #expect(SystemTrust.hasHashedEntries(directories: [plain.path, hashed.path]))
    }

    @Test func aBundleOtherThanTheDefaultIsLoadedWholeAsBefore() throws {
        let hashed = try TemporaryDirectory()
        try Data("x".utf8).write(to: URL(fileURLWithPath: hashed.path("3513523f.0")))
        let bundle = hashed.path("bundle.pem")
        try Data("x".utf8).write(to: URL(fileURLWithPath: bundle))
        try FileManager.default.createSymbolicLink(atPath: hashed.path("link.pem"), withDestinationPath: bundle)
        let other = hashed.path("other.pem")
        try Data("x".utf8).write(to: URL(fileURLWithPath: other))

        #expect(SystemTrust.choose(certificateFile: nil, defaultFile: bundle, directories: [hashed.path]) == .hashedDirectory)
        #expect(SystemTrust.choose(certificateFile: bundle, defaultFile: bundle, directories: [hashed.path]) == .hashedDirectory)
        #expect(SystemTrust.choose(certificateFile: hashed.path("link.pem"), defaultFile: bundle,
                                   directories: [hashed.path]) == .hashedDirectory)
        #expect(SystemTrust.choose(certificateFile: other, defaultFile: bundle, directories: [hashed.path]) == .defaultPaths)
        #expect(SystemTrust.choose(certificateFile: nil, defaultFile: bundle, directories: [hashed.path + "/none"]) == .defaultPaths)
    }

    /// On this kind of machine (Debian: /etc/ssl/certs hashed by update-ca-certificates) the lazy
    /// directory is what a client gets.
    @Test func aDebianMachineGetsTheLazyDirectory() throws {
        try #require(FileManager.default.fileExists(atPath: "/etc/ssl/certs/ca-certificates.crt"), "not a Debian-style store")
        let file = ProcessInfo.processInfo.environment["SSL_CERT_FILE"]
        try #require(file == nil || file == "/etc/ssl/certs/ca-certificates.crt", "SSL_CERT_FILE names another bundle")
        #expect(try TLSContext.client().systemTrust == .hashedDirectory)
    }

    /// The lazy directory must still reach the system's roots: a root from the default bundle is
    /// found by subject through the context's store, as a handshake would look for it.
    @Test func aClientContextFindsASystemRootBySubject() throws {
        let client = try TLSContext.client()
        let expected = SystemTrust.choose(certificateFile: ProcessInfo.processInfo.environment["SSL_CERT_FILE"],
                                          defaultFile: String(cString: X509_get_default_cert_file()),
                                          directories: SystemTrust.certificateDirectories())
        #expect(client.systemTrust == expected)

        let bundle = String(cString: X509_get_default_cert_file())
        try #require(FileManager.default.fileExists(atPath: bundle), "no CA bundle at \(bundle) to take a root from")
        let roots = try PEMFile.certificates(at: bundle)
        defer { roots.forEach { X509_free($0) } }
        let root = try #require(roots.last)
        let store = try #require(SSL_CTX_get_cert_store(client.context))
        let storeContext = try #require(X509_STORE_CTX_new())
        defer { X509_STORE_CTX_free(storeContext) }
        #expect(X509_STORE_CTX_init(storeContext, store, root, nil) == 1)
        var issuer: OpaquePointer?
        #expect(X509_STORE_CTX_get1_issuer(&issuer, storeContext, root) == 1, "the store does not find a system root")
        if let issuer {
            #expect(X509_cmp(issuer, root) == 0)
            X509_free(issuer)
        }
    }
}
