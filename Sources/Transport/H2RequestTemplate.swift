/// The part of a request that many requests share, encoded once: the method, a `:path` prefix and
/// header fields with their HPACK rule. A session copies it into its header block with a per-request
/// path suffix and body, so submitting costs a few `memcpy`s instead of building strings and arrays
/// (`H2ClientSession.submit(template:pathSuffix:headers:body:tag:submittedAt:)`).
///
/// Immutable once made; a sender makes a new one when a header value changes (a fresh provider
/// token every 50 minutes).
public final class H2RequestTemplate: Sendable {
    struct Field: Sendable {
        let nameStart: Int
        let nameCount: Int
        let valueStart: Int
        let valueCount: Int
        let indexing: H2Header.Indexing
    }

    let method: [UInt8]
    let pathPrefix: [UInt8]
    /// Every field's name and value, back to back.
    let bytes: [UInt8]
    let fields: [Field]

    public init(method: String = "POST", pathPrefix: String, headers: [H2Header]) {
        self.method = Array(method.utf8)
        self.pathPrefix = Array(pathPrefix.utf8)
        var bytes: [UInt8] = []
        var fields: [Field] = []
        for header in headers {
            let nameStart = bytes.count
            bytes.append(contentsOf: header.name.utf8)
            let valueStart = bytes.count
            bytes.append(contentsOf: header.value.utf8)
            fields.append(Field(nameStart: nameStart, nameCount: valueStart - nameStart, valueStart: valueStart,
                                valueCount: bytes.count - valueStart, indexing: header.indexing))
        }
        self.bytes = bytes
        self.fields = fields
    }

    /// The header fields, for checks and tests.
    public var headers: [H2Header] {
        fields.map { field in
            H2Header(String(decoding: bytes[field.nameStart..<field.nameStart + field.nameCount], as: UTF8.self),
                     String(decoding: bytes[field.valueStart..<field.valueStart + field.valueCount], as: UTF8.self),
                     indexing: field.indexing)
        }
    }
}
