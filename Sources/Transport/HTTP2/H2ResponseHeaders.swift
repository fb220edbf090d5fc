import CNGHTTP2

/// One header field of a server's answer besides `:status`, with a static name and a short value
/// kept inline: answering with it allocates nothing on the Swift side (no `String`, no array).
///
/// The mock APNs server answers every request with a fresh `apns-id`; making a 36-byte `String`
/// and an `[H2Header]` for each was a measurable part of its time. Values longer than
/// `maxValueBytes` do not fit: answer with `[H2Header]` instead.
public struct H2ResponseField: Sendable {
    /// The longest value kept inline; room for a UUID and then some.
    public static let maxValueBytes = 64

    let name: StaticString
    let neverIndexed: Bool
    // Inlinable `append`: the mock fills a 36-byte apns-id per answer, a call per byte was visible.
    @usableFromInline private(set) var valueCount = 0
    @usableFromInline var value = InlineArray<64, UInt8>(repeating: 0)

    /// An empty value, to be filled with `append`.
    public init(name: StaticString, neverIndexed: Bool) {
        self.name = name
        self.neverIndexed = neverIndexed
    }

    /// `value`'s bytes, or nil when longer than `maxValueBytes`.
    public init?(name: StaticString, value text: String, neverIndexed: Bool) {
        self.init(name: name, neverIndexed: neverIndexed)
        guard text.utf8.count <= Self.maxValueBytes else { return nil }
        for byte in text.utf8 { append(byte) }
    }

    /// Appends one byte of the value; precondition: the value has room.
    @inlinable
    public mutating func append(_ byte: UInt8) {
        precondition(valueCount < Self.maxValueBytes, "H2ResponseField: value longer than maxValueBytes")
        value[valueCount] = byte
        valueCount += 1
    }

    /// Appends `count` bytes that `write` stores at the pointer it gets (the value's free room, in
    /// place); precondition: they fit. One check for them all, where `append` checks each byte.
    @inlinable
    public mutating func append(count: Int, _ write: (UnsafeMutablePointer<UInt8>) -> Void) {
        precondition(count >= 0 && valueCount + count <= Self.maxValueBytes, "H2ResponseField: value longer than maxValueBytes")
        let start = valueCount
        withUnsafeMutableBytes(of: &value) { raw in
            write(raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + start)
        }
        valueCount += count
    }

    /// The value as a `String` (allocates; for tests and messages).
    public var valueText: String {
        withValueBytes { String(decoding: $0, as: UTF8.self) }
    }

    func withValueBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        withUnsafeBytes(of: value) { raw in
            body(UnsafeBufferPointer(rebasing: raw.bindMemory(to: UInt8.self)[0..<valueCount]))
        }
    }
}

/// The `nghttp2_nv` array of an answer made of `:status` and at most two `H2ResponseField`s, in
/// memory the session owns and refills per answer (nghttp2 copies the fields on submit).
final class H2ResponseHeaderBlock {
    private let fields = UnsafeMutablePointer<nghttp2_nv>.allocate(capacity: 3)
    /// The status digits, then the fields' values.
    private let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: 24 + 2 * H2ResponseField.maxValueBytes)
    private static let statusName: StaticString = ":status"

    deinit {
        fields.deallocate()
        bytes.deallocate()
    }

    /// Fills the block; returns the field count. Valid until the next `fill`. A never-indexed
    /// field whose name `names` has not seen on this connection goes out indexed (`H2IndexedNames`).
    func fill(status: Int, field: H2ResponseField?, second: H2ResponseField? = nil,
              names: inout H2IndexedNames) -> Int {
        let digits = Self.writeDecimal(status, to: bytes)
        fields[0] = nghttp2_nv(name: UnsafeMutablePointer(mutating: Self.statusName.utf8Start),
                               value: bytes, namelen: Self.statusName.utf8CodeUnitCount, valuelen: digits,
                               flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
        guard let field else { return 1 }
        put(field, at: 1, names: &names)
        guard let second else { return 2 }
        put(second, at: 2, names: &names)
        return 3
    }

    /// Field `index` (1 or 2), its value copied into the block.
    private func put(_ field: H2ResponseField, at index: Int, names: inout H2IndexedNames) {
        let value = bytes + 24 + (index - 1) * H2ResponseField.maxValueBytes
        field.withValueBytes { source in
            if let base = source.baseAddress { value.update(from: base, count: source.count) }
        }
        let neverIndexed = field.neverIndexed
            && !names.indexesFirst(UnsafeBufferPointer(start: field.name.utf8Start, count: field.name.utf8CodeUnitCount))
        fields[index] = nghttp2_nv(name: UnsafeMutablePointer(mutating: field.name.utf8Start), value: value,
                                   namelen: field.name.utf8CodeUnitCount, valuelen: field.valueCount,
                                   flags: neverIndexed ? H2Wire.nvNoIndex : UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
    }

    var nv: UnsafePointer<nghttp2_nv> { UnsafePointer(fields) }

    /// `value` in decimal (at most 20 characters, a sign included) at `out`; returns the count.
    private static func writeDecimal(_ value: Int, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var magnitude = value.magnitude
        var reversed = InlineArray<20, UInt8>(repeating: 0)
        var count = 0
        repeat {
            reversed[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
            count += 1
        } while magnitude > 0
        var written = 0
        if value < 0 {
            out[0] = UInt8(ascii: "-")
            written = 1
        }
        while count > 0 {
            count -= 1
            out[written] = reversed[count]
            written += 1
        }
        return written
    }
}
