import Foundation
import Testing
import TestSupport
@testable import Transport

/// What an Apple push certificate says it serves, read with OpenSSL: the topics extension
/// (1.2.840.113635.100.6.3.6) lists several apps, else the subject's UID names one; the
/// development and production extensions name the environment. Certificates made at test time.
@Suite struct TLSIdentityPushTests {
    /// DER: a UTF8String, or a SEQUENCE of `items` (short lengths only).
    static func utf8(_ text: String) -> [UInt8] { [0x0C, UInt8(text.utf8.count)] + Array(text.utf8) }
    static func sequence(_ items: [UInt8]) -> [UInt8] { [0x30, UInt8(items.count)] + items }
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test func theTopicsExtensionListsTheAppsAndTheEnvironmentExtensionsTheirEnvironment() throws {
        let directory = try TemporaryDirectory()
        let topics = Self.sequence(Self.utf8("com.example.one") + Self.sequence(Self.utf8("app"))
            + Self.utf8("com.example.two") + Self.sequence(Self.utf8("app") + Self.utf8("voip")))
        let status = try OpenSSL.status(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                     "-keyout", directory.path("push.key"), "-out", directory.path("push.pem"), "-days", "2",
                                     "-subj", "/UID=com.example.one/CN=Apple Production IOS Push Services: com.example.one",
                                     "-addext", "1.2.840.113635.100.6.3.6=DER:" + Self.hex(topics),
                                     "-addext", "1.2.840.113635.100.6.3.2=DER:0500"])
        try #require(status == 0)
        let identity = try TLSIdentity.load(certificateFile: directory.path("push.pem"), keyFile: directory.path("push.key"))
        #expect(identity.pushTopics == ["com.example.one", "com.example.two"])
        #expect(identity.pushEnvironments == (false, true))
        #expect(identity.label == "Apple Production IOS Push Services: com.example.one")
    }

    @Test func withoutTheTopicsExtensionTheSubjectsUIDNamesTheApp() throws {
        let authority = try CertificateAuthority()
        let identity = try authority.issueClientCertificate(commonName: "Apple Push Services: com.example.app",
                                                            userID: "com.example.app")
        #expect(identity.pushTopics == ["com.example.app"])
        #expect(identity.pushEnvironments == (false, false), "not made by Apple: it names no environment")
        #expect(identity.label == "Apple Push Services: com.example.app")
        let plain = try authority.issueClientCertificate(commonName: "client")
        #expect(plain.pushTopics.isEmpty)
    }

    @Test func aCutOrForeignExtensionYieldsNoTopics() {
        #expect(TLSIdentity.utf8Strings(inSequence: []) == [])
        #expect(TLSIdentity.utf8Strings(inSequence: [0x30, 0x05, 0x0C, 0x07, 0x61]) == [], "cut short")
        #expect(TLSIdentity.utf8Strings(inSequence: Self.utf8("com.example.app")) == [], "not a SEQUENCE")
    }
}
