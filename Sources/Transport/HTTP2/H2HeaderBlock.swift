import CNGHTTP2

/// Reusable storage for an `nghttp2_nv` array and the bytes its entries point at.
///
/// nghttp2 copies the name/value pairs during `nghttp2_submit_request` / `nghttp2_submit_response`,
/// so one block per session, refilled for every submit, is enough: no allocation per request once
/// the block has grown to the largest header set seen.
final class H2HeaderBlock {
    private var fields: UnsafeMutablePointer<nghttp2_nv>
    private var fieldCapacity: Int
    private var bytes: UnsafeMutablePointer<UInt8>
    private var byteCapacity: Int
    private(set) var count = 0
    private var used = 0

    init(fieldCapacity: Int = 16, byteCapacity: Int = 1024) {
        self.fieldCapacity = fieldCapacity
        self.byteCapacity = byteCapacity
        fields = .allocate(capacity: fieldCapacity)
        bytes = .allocate(capacity: byteCapacity)
    }

    deinit {
        fields.deallocate()
        bytes.deallocate()
    }

    /// Empties the block and makes room for `fieldCount` fields of `byteCount` bytes in total, so
    /// pointers handed out by `append` stay valid until the next `reset`.
    func reset(fieldCount: Int, byteCount: Int) {
        count = 0
        used = 0
        if fieldCount > fieldCapacity {
            fields.deallocate()
            fieldCapacity = max(fieldCount, fieldCapacity * 2)
            fields = .allocate(capacity: fieldCapacity)
        }
        if byteCount > byteCapacity {
            bytes.deallocate()
            byteCapacity = max(byteCount, byteCapacity * 2)
            bytes = .allocate(capacity: byteCapacity)
        }
    }

    /// Appends a field; the caller reserved room for it in `reset`.
    func append(_ name: String, _ value: String, neverIndexed: Bool) {
        precondition(count < fieldCapacity, "H2HeaderBlock: more fields than reserved")
        let namePointer = copy(name)
        let valuePointer = copy(value)
        fields[count] = nghttp2_nv(
            name: namePointer.start, value: valuePointer.start,
            namelen: namePointer.count, valuelen: valuePointer.count,
            flags: neverIndexed ? UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) : UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
        count += 1
    }

    /// Appends a field from bytes; the value is `value` followed by `valueSuffix`.
    func append(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
                valueSuffix: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0), neverIndexed: Bool) {
        precondition(count < fieldCapacity, "H2HeaderBlock: more fields than reserved")
        let namePointer = copy(name)
        let valuePointer = copy(value)
        _ = copy(valueSuffix)
        fields[count] = nghttp2_nv(
            name: namePointer, value: valuePointer, namelen: name.count, valuelen: value.count + valueSuffix.count,
            flags: neverIndexed ? UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) : UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
        count += 1
    }

    /// NGHTTP2_NV_FLAG_NO_COPY_NAME | _VALUE: nghttp2 reads the bytes when it encodes the frame
    /// instead of copying them on submit. Only for bytes that outlive that moment.
    static let uncopied = UInt8(NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue | NGHTTP2_NV_FLAG_NO_COPY_VALUE.rawValue)

    /// Appends a field whose bytes nghttp2 will not copy: a static name and a value that lives at
    /// least until the request's HEADERS frame is encoded (the caller's promise).
    func appendUncopied(name: StaticString, value: UnsafeBufferPointer<UInt8>, neverIndexed: Bool) {
        appendUncopied(name: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount), value: value,
                       neverIndexed: neverIndexed)
    }

    /// `appendUncopied(name:value:neverIndexed:)` with a name that lives as long as the value (a template's).
    func appendUncopied(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, neverIndexed: Bool) {
        precondition(count < fieldCapacity, "H2HeaderBlock: more fields than reserved")
        fields[count] = nghttp2_nv(
            name: UnsafeMutablePointer(mutating: name.baseAddress), value: UnsafeMutablePointer(mutating: value.baseAddress),
            namelen: name.count, valuelen: value.count,
            flags: Self.uncopied | (neverIndexed ? UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) : UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
        count += 1
    }

    /// Points field `position` (appended before) at other bytes, with other flags: a session's
    /// request that differs from the one before only in `:path` changes that field alone.
    func replaceValue(at position: Int, value: UnsafePointer<UInt8>?, count valueCount: Int, flags: UInt8) {
        precondition(position < count, "H2HeaderBlock: no such field")
        fields[position].value = UnsafeMutablePointer(mutating: value)
        fields[position].valuelen = valueCount
        fields[position].flags = flags
    }

    /// Appends `template`'s ready-made fields (they point at the template's bytes, uncopied: the
    /// template must live until the request's HEADERS frame is encoded).
    func append(_ template: H2RequestTemplate, notFirst: Bool) {
        precondition(count + template.fieldCount <= fieldCapacity, "H2HeaderBlock: more fields than reserved")
        (fields + count).update(from: template.entries(notFirst: notFirst), count: template.fieldCount)
        count += template.fieldCount
    }

    static func neverIndexed(_ indexing: H2Header.Indexing, notFirst: Bool) -> Bool {
        switch indexing {
        case .indexed: false
        case .neverIndexed: true
        case .indexedOnFirstRequestOnly: notFirst
        }
    }

    /// Appends `headers` with their HPACK rule; `.indexedOnFirstRequestOnly` is never-indexed once
    /// `notFirst` (the session already sent a header block).
    func append(_ headers: [H2Header], notFirst: Bool) {
        for header in headers {
            append(header.name, header.value, neverIndexed: Self.neverIndexed(header.indexing, notFirst: notFirst))
        }
    }

    /// The bytes `headers` need in the block.
    static func byteCount(_ headers: [H2Header]) -> Int {
        var total = 0
        for header in headers { total += header.name.utf8.count + header.value.utf8.count }
        return total
    }

    /// The fields, valid until the next `reset`.
    var nv: UnsafePointer<nghttp2_nv> { UnsafePointer(fields) }

    private func copy(_ source: UnsafeRawBufferPointer) -> UnsafeMutablePointer<UInt8> {
        let start = bytes + used
        precondition(used + source.count <= byteCapacity, "H2HeaderBlock: more bytes than reserved")
        if let base = source.baseAddress, source.count > 0 {
            UnsafeMutableRawPointer(start).copyMemory(from: base, byteCount: source.count)
        }
        used += source.count
        return start
    }

    private func copy(_ text: String) -> (start: UnsafeMutablePointer<UInt8>, count: Int) {
        let start = bytes + used
        let length = text.utf8.count
        precondition(used + length <= byteCapacity, "H2HeaderBlock: more bytes than reserved")
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { source in
            if let base = source.baseAddress { start.update(from: base, count: source.count) }
        }
        if copied == nil {
            var offset = 0
            for byte in text.utf8 { start[offset] = byte; offset += 1 }
        }
        used += length
        return (start, length)
    }
}
