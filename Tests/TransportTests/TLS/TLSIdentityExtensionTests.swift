import Foundation
import Testing
import TestSupport
@testable import Transport

/// What a certificate says beyond its key, read with OpenSSL: an extension's bytes by OID, the
/// subject's UID and a label. Certificates made at test time.
@Suite struct TLSIdentityExtensionTests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test func anExtensionIsReadByItsOIDAsTheBytesItHolds() throws {
        let directory = try TemporaryDirectory()
        let topics: [UInt8] = [0x30, 0x11, 0x0C, 0x0F] + Array("com.example.one".utf8)
        let status = try OpenSSL.status(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                     "-keyout", directory.path("push.key"), "-out", directory.path("push.pem"), "-days", "2",
                                     "-subj", "/UID=com.example.one/CN=Apple Production IOS Push Services: com.example.one",
                                     "-addext", "1.2.840.113635.100.6.3.6=DER:" + Self.hex(topics),
                                     "-addext", "1.2.840.113635.100.6.3.2=DER:0500"])
        try #require(status == 0)
        let identity = try TLSIdentity.load(certificateFile: directory.path("push.pem"), keyFile: directory.path("push.key"))
        #expect(identity.extensionBytes(oid: "1.2.840.113635.100.6.3.6") == topics)
        #expect(identity.extensionBytes(oid: "1.2.840.113635.100.6.3.2") == [0x05, 0x00])
        #expect(identity.extensionBytes(oid: "1.2.840.113635.100.6.3.1") == nil)
        #expect(identity.extensionBytes(oid: "not an OID") == nil)
        #expect(identity.subjectUserID == "com.example.one")
        #expect(identity.label == "Apple Production IOS Push Services: com.example.one")
    }

    @Test func theLabelIsTheCommonNameElseTheUID() throws {
        let authority = try CertificateAuthority()
        let identity = try authority.issueClientCertificate(commonName: "Apple Push Services: com.example.app",
                                                            userID: "com.example.app")
        #expect(identity.subjectUserID == "com.example.app")
        #expect(identity.label == "Apple Push Services: com.example.app")
        let plain = try authority.issueClientCertificate(commonName: "client")
        #expect(plain.subjectUserID == nil)
        #expect(plain.label == "client")
    }
}
