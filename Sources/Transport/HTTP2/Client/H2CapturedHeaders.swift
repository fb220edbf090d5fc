import ByteScan

/// The response headers a client session keeps for its caller, named once per session: one whose
/// value a response keeps as text (`H2Response.apnsIDText`), one whose value it keeps when it is a
/// UUID (`H2Response.uniqueID`). An APNs client names `apns-id` and `apns-unique-id`. Every other
/// field but `:status` and `content-length` is passed over. Names are lowercase, as HTTP/2 sends them.
public struct H2CapturedHeaders: Sendable {
    /// The header kept as text; empty: none.
    public let text: InlineText
    /// The header kept when its value is a UUID; empty: none.
    public let uuid: InlineText

    /// Keeps the header named `text` as text and the one named `uuid` when it is a UUID (nil: none).
    public init(text: String? = nil, uuid: String? = nil) {
        self.text = text.map(InlineText.init) ?? InlineText()
        self.uuid = uuid.map(InlineText.init) ?? InlineText()
    }

    /// Keeps no header.
    public static let none = H2CapturedHeaders()
}

/// `H2CapturedHeaders`' names where the session's header callback compares them with every field of
/// every answer: in one buffer allocated with the session and freed with it (`deallocate`), so a
/// comparison reads two lengths and the bytes, and allocates nothing.
struct H2CapturedNames {
    private let storage: UnsafeMutableBufferPointer<UInt8>
    /// The text header's name; `textLength` -1 when none (no field name matches).
    let text: UnsafePointer<UInt8>
    let textLength: Int
    /// The UUID header's name; `uuidLength` -1 when none.
    let uuid: UnsafePointer<UInt8>
    let uuidLength: Int

    init(_ headers: H2CapturedHeaders) {
        let storage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, headers.text.count + headers.uuid.count))
        let end = headers.text.withUnsafeBytes { storage.initialize(fromContentsOf: $0) }
        headers.uuid.withUnsafeBytes { _ = UnsafeMutableBufferPointer(rebasing: storage[end...]).initialize(fromContentsOf: $0) }
        self.storage = storage
        let base = UnsafePointer(storage.baseAddress!)
        text = base
        textLength = headers.text.isEmpty ? -1 : headers.text.count
        uuid = base + end
        uuidLength = headers.uuid.isEmpty ? -1 : headers.uuid.count
    }

    func deallocate() {
        storage.deallocate()
    }
}
