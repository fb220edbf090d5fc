/// What an Apple push certificate says it serves, so that several certificates in one run can each
/// take the rows of their own apps and environment. Read from the certificate's extensions by OID
/// and its subject's UID, which the TLS layer reads out (`TLSIdentity.extensionBytes(oid:)`,
/// `subjectUserID`): this type holds Apple's OIDs and what they mean.
public struct PushCertificateClaims: Sendable, Equatable {
    /// The topics extension: the bundle ids of the apps, each followed by its push types.
    public static let topicsOID = "1.2.840.113635.100.6.3.6"
    /// Present on a certificate for APNs' Development (sandbox) environment.
    public static let developmentOID = "1.2.840.113635.100.6.3.1"
    /// Present on a certificate for APNs' Production environment.
    public static let productionOID = "1.2.840.113635.100.6.3.2"

    /// The bundle ids the certificate serves: those its topics extension lists, else the subject's
    /// UID (Apple's older single-app certificates). Empty when it names neither.
    public let topics: [String]
    /// The certificate serves Development (sandbox); false with Production below when it names
    /// neither (a certificate not made by Apple).
    public let development: Bool
    /// The certificate serves Production.
    public let production: Bool

    /// The claims of a certificate whose extension of each OID is `extensionBytes(oid)` (its
    /// value's bytes; nil when it has none) and whose subject's UID is `subjectUserID`.
    public init(extensionBytes: (String) -> [UInt8]?, subjectUserID: String?) {
        let listed = extensionBytes(Self.topicsOID).map(Self.utf8Strings(inSequence:)) ?? []
        topics = !listed.isEmpty ? listed : subjectUserID.map { [$0] } ?? []
        development = extensionBytes(Self.developmentOID) != nil
        production = extensionBytes(Self.productionOID) != nil
    }

    /// The UTF8String items directly inside a DER SEQUENCE (nested items skipped); empty when
    /// `der` is not one.
    static func utf8Strings(inSequence der: [UInt8]) -> [String] {
        guard let outer = element(der, at: 0), outer.tag == 0x30 else { return [] }
        var strings: [String] = []
        var position = outer.contentStart
        while position < outer.end, let item = element(der, at: position), item.end <= outer.end {
            if item.tag == 0x0C {
                strings.append(String(decoding: der[item.contentStart..<item.end], as: UTF8.self))
            }
            position = item.end
        }
        return strings
    }

    /// One DER element's tag, where its content starts and where it ends; nil when cut short.
    private static func element(_ der: [UInt8], at start: Int) -> (tag: UInt8, contentStart: Int, end: Int)? {
        guard start + 2 <= der.count else { return nil }
        let tag = der[start]
        var length = Int(der[start + 1])
        var contentStart = start + 2
        if length & 0x80 != 0 {
            let count = length & 0x7F
            guard count >= 1, count <= 4, contentStart + count <= der.count else { return nil }
            length = der[contentStart..<contentStart + count].reduce(0) { $0 << 8 | Int($1) }
            contentStart += count
        }
        let end = contentStart + length
        return end <= der.count ? (tag, contentStart, end) : nil
    }
}
