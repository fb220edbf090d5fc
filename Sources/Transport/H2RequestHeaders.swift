/// A request's header fields as received, pseudo-headers included, in arrival order: every name
/// and value sits in one byte buffer and each field is an entry of offsets into it.
///
/// The mock APNs server receives one header block per request; making a `String` and an
/// `H2Field` per field was a large share of its time. Here a request costs the buffer and the
/// entry array, and a `String` is made only for a value
/// someone asks for. Repeated fields stay repeated; each keeps its HPACK never-indexed flag.
public struct H2RequestHeaders: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        var nameStart: Int32
        var nameLength: Int32
        var valueLength: Int32
        var neverIndexed: Bool
        var valueStart: Int { Int(nameStart) + Int(nameLength) }
    }

    private var bytes: [UInt8] = []
    private var entries: [Entry] = []

    public init() {}

    /// The same fields as `fields` (for tests and for callers that already hold `H2Field`s).
    public init(_ fields: [H2Field]) {
        for field in fields {
            append(name: Array(field.name.utf8), value: Array(field.value.utf8), neverIndexed: field.neverIndexed)
        }
    }

    /// How many fields arrived.
    public var count: Int { entries.count }
    public var indices: Range<Int> { entries.indices }

    /// Appends one field. Lengths beyond Int32 cannot occur: nghttp2 limits a header block far below.
    mutating func append(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, neverIndexed: Bool) {
        if entries.capacity == 0 {
            // One allocation each for a typical APNs request (its JWT is about 200 bytes).
            bytes.reserveCapacity(512)
            entries.reserveCapacity(16)
        }
        let start = bytes.count
        bytes.append(contentsOf: name)
        bytes.append(contentsOf: value)
        entries.append(Entry(nameStart: Int32(truncatingIfNeeded: start), nameLength: Int32(truncatingIfNeeded: name.count),
                             valueLength: Int32(truncatingIfNeeded: value.count), neverIndexed: neverIndexed))
    }

    private mutating func append(name: [UInt8], value: [UInt8], neverIndexed: Bool) {
        name.withUnsafeBufferPointer { name in
            value.withUnsafeBufferPointer { value in append(name: name, value: value, neverIndexed: neverIndexed) }
        }
    }

    /// Field `index`'s name is exactly `name` (compared as bytes, no `String` made).
    public func name(at index: Int, is name: StaticString) -> Bool {
        let entry = entries[index]
        guard Int(entry.nameLength) == name.utf8CodeUnitCount else { return false }
        let expected = name.utf8Start
        let start = Int(entry.nameStart)
        for offset in 0..<Int(entry.nameLength) where bytes[start + offset] != expected[offset] { return false }
        return true
    }

    /// The first byte of field `index`'s name (names are never empty in HTTP/2; 0 if one is).
    public func nameFirstByte(at index: Int) -> UInt8 {
        let entry = entries[index]
        return entry.nameLength > 0 ? bytes[Int(entry.nameStart)] : 0
    }

    public func name(at index: Int) -> String {
        let entry = entries[index]
        return string(from: Int(entry.nameStart), count: Int(entry.nameLength))
    }

    public func value(at index: Int) -> String {
        let entry = entries[index]
        return string(from: entry.valueStart, count: Int(entry.valueLength))
    }

    /// Field `index`'s value as bytes (a slice of the shared buffer: no copy).
    public func valueBytes(at index: Int) -> ArraySlice<UInt8> {
        let entry = entries[index]
        return bytes[entry.valueStart..<entry.valueStart + Int(entry.valueLength)]
    }

    public func isNeverIndexed(at index: Int) -> Bool { entries[index].neverIndexed }

    /// Every field as an `H2Field` (allocates; for tests and diagnostics).
    public var fields: [H2Field] {
        indices.map { H2Field(name: name(at: $0), value: value(at: $0), neverIndexed: isNeverIndexed(at: $0)) }
    }

    /// The values of every field named `name`, in order.
    public func values(of name: String) -> [String] {
        let wanted = Array(name.utf8)
        return indices.filter { index in
            let entry = entries[index]
            return Int(entry.nameLength) == wanted.count
                && bytes[Int(entry.nameStart)..<entry.valueStart].elementsEqual(wanted)
        }.map { value(at: $0) }
    }

    private func string(from start: Int, count: Int) -> String {
        guard count > 0 else { return "" }
        return bytes.withUnsafeBufferPointer { buffer in
            String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<start + count]), as: UTF8.self)
        }
    }
}
