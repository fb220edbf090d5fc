import COpenSSL

/// What an Apple push certificate says it serves, so that several certificates in one run can
/// each take the rows of their own apps and environment.
extension TLSIdentity {
    /// The topics extension (Apple's OID 1.2.840.113635.100.6.3.6): the bundle ids of the apps,
    /// each followed by its push types.
    static let topicsOID = "1.2.840.113635.100.6.3.6"
    /// Present on a certificate for APNs' Development (sandbox) environment.
    static let developmentOID = "1.2.840.113635.100.6.3.1"
    /// Present on a certificate for APNs' Production environment.
    static let productionOID = "1.2.840.113635.100.6.3.2"

    /// The bundle ids the certificate serves: those its topics extension lists, else the
    /// subject's UID (Apple's older single-app certificates). Empty when it names neither.
    public var pushTopics: [String] {
        if let data = Self.extensionData(certificate, oid: Self.topicsOID) {
            let topics = Self.utf8Strings(inSequence: data)
            if !topics.isEmpty { return topics }
        }
        return Self.subjectField(certificate, nid: NID_userId).map { [$0] } ?? []
    }

    /// The environments the certificate serves, as (development, production) flags from its
    /// extensions; both false when it has neither (a certificate not made by Apple).
    public var pushEnvironments: (development: Bool, production: Bool) {
        (Self.extensionData(certificate, oid: Self.developmentOID) != nil,
         Self.extensionData(certificate, oid: Self.productionOID) != nil)
    }

    /// What records and messages call the certificate: its subject's CN, else its UID, else the subject.
    public var label: String {
        Self.subjectField(certificate, nid: NID_commonName) ?? Self.subjectField(certificate, nid: NID_userId) ?? subject
    }

    private static func subjectField(_ certificate: OpaquePointer, nid: Int32) -> String? {
        guard let name = X509_get_subject_name(certificate) else { return nil }
        let index = X509_NAME_get_index_by_NID(name, nid, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index),
              let data = X509_NAME_ENTRY_get_data(entry) else { return nil }
        let text = bytes(of: data).map { String(decoding: $0, as: UTF8.self) }
        return text?.isEmpty == false ? text : nil
    }

    private static func extensionData(_ certificate: OpaquePointer, oid: String) -> [UInt8]? {
        guard let object = OBJ_txt2obj(oid, 1) else { return nil }
        defer { ASN1_OBJECT_free(object) }
        let index = X509_get_ext_by_OBJ(certificate, object, -1)
        guard index >= 0, let item = X509_get_ext(certificate, index), let data = X509_EXTENSION_get_data(item) else {
            return nil
        }
        return bytes(of: data)
    }

    private static func bytes(of string: UnsafeMutablePointer<ASN1_STRING>) -> [UInt8]? {
        let length = Int(ASN1_STRING_length(string))
        guard length >= 0, let start = ASN1_STRING_get0_data(string) else { return nil }
        return Array(UnsafeBufferPointer(start: start, count: length))
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
