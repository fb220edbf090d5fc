import Testing
@testable import APNs

/// What an Apple push certificate says it serves, from its extensions' bytes by OID: the topics
/// extension lists several apps, else the subject's UID names one; the development and production
/// extensions name the environment.
@Suite struct PushCertificateClaimsTests {
    /// DER: a UTF8String, or a SEQUENCE of `items` (short lengths only).
    static func utf8(_ text: String) -> [UInt8] { [0x0C, UInt8(text.utf8.count)] + Array(text.utf8) }
    static func sequence(_ items: [UInt8]) -> [UInt8] { [0x30, UInt8(items.count)] + items }

    @Test func theTopicsExtensionListsTheAppsAndTheEnvironmentExtensionsTheirEnvironment() {
        let topics = Self.sequence(Self.utf8("com.example.one") + Self.sequence(Self.utf8("app"))
            + Self.utf8("com.example.two") + Self.sequence(Self.utf8("app") + Self.utf8("voip")))
        let extensions = ["1.2.840.113635.100.6.3.6": topics, "1.2.840.113635.100.6.3.2": [0x05, 0x00]]
        let claims = PushCertificateClaims(extensionBytes: { extensions[$0] }, subjectUserID: "com.example.one")
        #expect(claims.topics == ["com.example.one", "com.example.two"])
        #expect(!claims.development && claims.production)
    }

    @Test func withoutTheTopicsExtensionTheSubjectsUIDNamesTheApp() {
        let claims = PushCertificateClaims(extensionBytes: { _ in nil }, subjectUserID: "com.example.app")
        #expect(claims.topics == ["com.example.app"])
        #expect(!claims.development && !claims.production, "not made by Apple: it names no environment")
        #expect(PushCertificateClaims(extensionBytes: { _ in nil }, subjectUserID: nil).topics.isEmpty)
        let empty = PushCertificateClaims(extensionBytes: { $0 == PushCertificateClaims.topicsOID ? Self.sequence([]) : nil },
                                          subjectUserID: "com.example.app")
        #expect(empty.topics == ["com.example.app"], "an empty list falls back to the UID")
    }

    @Test func aCutOrForeignExtensionYieldsNoTopics() {
        #expect(PushCertificateClaims.utf8Strings(inSequence: []) == [])
        #expect(PushCertificateClaims.utf8Strings(inSequence: [0x30, 0x05, 0x0C, 0x07, 0x61]) == [], "cut short")
        #expect(PushCertificateClaims.utf8Strings(inSequence: Self.utf8("com.example.app")) == [], "not a SEQUENCE")
    }
}
