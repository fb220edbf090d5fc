import Glibc

/// A request's header fields as received, pseudo-headers included, in arrival order: every name
/// and value sits in one byte buffer and each field is an entry of offsets into it.
///
/// The mock APNs server receives one header block per request; making a `String` and an
/// `H2Field` per field was a large share of its time. Here a field costs two copies into buffers
/// the server session recycles between requests (`Storage`), and a `String` is made only for a
/// value someone asks for. Repeated fields stay repeated; each keeps its HPACK never-indexed flag.
///
/// A value type: a copy shares the storage until one side appends (copy on write).
/// @unchecked Sendable: the storage is written only while uniquely referenced.
public struct H2RequestHeaders: @unchecked Sendable, Equatable {
    struct Entry {
        var nameStart: Int32
        var nameLength: Int32
        var valueLength: Int32
        var neverIndexed: Bool
        var valueStart: Int { Int(nameStart) + Int(nameLength) }
    }

    /// The bytes and entries, in memory this class owns. Reused by `H2ServerSession` once no request
    /// refers to it any more (`isKnownUniquelyReferenced`).
    final class Storage {
        private(set) var bytes: UnsafeMutablePointer<UInt8>
        private var byteCapacity: Int
        private(set) var byteCount = 0
        private(set) var entries: UnsafeMutablePointer<Entry>
        private var entryCapacity: Int
        private(set) var count = 0

        // One allocation each for a typical APNs request (its JWT is about 200 bytes).
        init(byteCapacity: Int = 512, entryCapacity: Int = 16) {
            self.byteCapacity = max(byteCapacity, 16)
            self.entryCapacity = max(entryCapacity, 4)
            bytes = .allocate(capacity: self.byteCapacity)
            entries = .allocate(capacity: self.entryCapacity)
        }

        deinit {
            bytes.deallocate()
            entries.deallocate()
        }

        func copy() -> Storage {
            let copy = Storage(byteCapacity: byteCapacity, entryCapacity: entryCapacity)
            copy.bytes.update(from: bytes, count: byteCount)
            copy.entries.update(from: entries, count: count)
            copy.byteCount = byteCount
            copy.count = count
            return copy
        }

        /// Lengths beyond Int32 cannot occur: nghttp2 limits a header block far below.
        func append(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, neverIndexed: Bool) {
            let start = byteCount
            let needed = start + name.count + value.count
            if needed > byteCapacity { growBytes(to: needed) }
            if count == entryCapacity { growEntries() }
            if let base = name.baseAddress { (bytes + start).update(from: base, count: name.count) }
            if let base = value.baseAddress { (bytes + start + name.count).update(from: base, count: value.count) }
            entries[count] = Entry(nameStart: Int32(truncatingIfNeeded: start),
                                   nameLength: Int32(truncatingIfNeeded: name.count),
                                   valueLength: Int32(truncatingIfNeeded: value.count), neverIndexed: neverIndexed)
            byteCount = needed
            count += 1
        }

        func removeAll() {
            byteCount = 0
            count = 0
        }

        private func growBytes(to needed: Int) {
            let capacity = max(needed, byteCapacity * 2)
            let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
            grown.update(from: bytes, count: byteCount)
            bytes.deallocate()
            bytes = grown
            byteCapacity = capacity
        }

        private func growEntries() {
            let capacity = entryCapacity * 2
            let grown = UnsafeMutablePointer<Entry>.allocate(capacity: capacity)
            grown.update(from: entries, count: count)
            entries.deallocate()
            entries = grown
            entryCapacity = capacity
        }
    }

    /// nil while empty: an empty value allocates nothing.
    private(set) var storage: Storage?

    /// No fields; allocates nothing until one is appended.
    public init() {}

    /// Empty, appending into `storage` (which must be empty and referenced nowhere else).
    init(reusing storage: Storage?) {
        self.storage = storage
    }

    /// The same fields as `fields` (for tests and for callers that already hold `H2Field`s).
    public init(_ fields: [H2Field]) {
        for field in fields {
            var name = Array(field.name.utf8)
            var value = Array(field.value.utf8)
            name.withUnsafeMutableBufferPointer { name in
                value.withUnsafeMutableBufferPointer { value in
                    append(name: UnsafeBufferPointer(name), value: UnsafeBufferPointer(value),
                           neverIndexed: field.neverIndexed)
                }
            }
        }
    }

    /// How many fields arrived.
    public var count: Int { storage?.count ?? 0 }
    /// The valid field indexes, in arrival order.
    public var indices: Range<Int> { 0..<count }

    /// Appends one field.
    mutating func append(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, neverIndexed: Bool) {
        if storage == nil {
            storage = Storage()
        } else if !isKnownUniquelyReferenced(&storage) {
            storage = storage?.copy()
        }
        storage?.append(name: name, value: value, neverIndexed: neverIndexed)
    }

    private func entry(_ index: Int) -> (Entry, UnsafeMutablePointer<UInt8>) {
        guard let storage, index >= 0, index < storage.count else {
            preconditionFailure("H2RequestHeaders: index \(index) out of range")
        }
        return (storage.entries[index], storage.bytes)
    }

    /// Field `index`'s name is exactly `name` (compared as bytes, no `String` made).
    public func name(at index: Int, is name: StaticString) -> Bool {
        let (entry, bytes) = entry(index)
        // Word loads for the short names of headers, not a `memcmp` call each.
        return H2Wire.equals(bytes + Int(entry.nameStart), Int(entry.nameLength), name)
    }

    /// The first byte of field `index`'s name (names are never empty in HTTP/2; 0 if one is).
    public func nameFirstByte(at index: Int) -> UInt8 {
        let (entry, bytes) = entry(index)
        return entry.nameLength > 0 ? bytes[Int(entry.nameStart)] : 0
    }

    /// The length in bytes of field `index`'s name.
    public func nameLength(at index: Int) -> Int { Int(entry(index).0.nameLength) }

    /// Field `index`'s name (allocates a `String`; `value(at:equals:)` compares without one).
    public func name(at index: Int) -> String {
        let (entry, bytes) = entry(index)
        return Self.string(bytes + Int(entry.nameStart), Int(entry.nameLength))
    }

    /// Field `index`'s value (allocates a `String`).
    public func value(at index: Int) -> String {
        let (entry, bytes) = entry(index)
        return Self.string(bytes + entry.valueStart, Int(entry.valueLength))
    }

    /// Field `index`'s value is exactly `expected` (compared as bytes, no `String` made).
    public func value(at index: Int, equals expected: [UInt8]) -> Bool {
        let (entry, bytes) = entry(index)
        guard Int(entry.valueLength) == expected.count else { return false }
        return expected.withUnsafeBufferPointer { expected in
            expected.isEmpty || memcmp(bytes + entry.valueStart, expected.baseAddress!, expected.count) == 0
        }
    }

    /// Runs `body` over field `index`'s value bytes in place (valid only during the call).
    public func withValueBytes<Result>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        let (entry, bytes) = entry(index)
        return body(UnsafeBufferPointer(start: bytes + entry.valueStart, count: Int(entry.valueLength)))
    }

    /// A copy of field `index`'s value bytes.
    public func valueBytes(at index: Int) -> [UInt8] {
        let (entry, bytes) = entry(index)
        return Array(UnsafeBufferPointer(start: bytes + entry.valueStart, count: Int(entry.valueLength)))
    }

    /// Whether the client sent field `index` as a literal never indexed (Apple asks it for `authorization`).
    public func isNeverIndexed(at index: Int) -> Bool { entry(index).0.neverIndexed }

    /// Every field as an `H2Field` (allocates; for tests and diagnostics).
    public var fields: [H2Field] {
        indices.map { H2Field(name: name(at: $0), value: value(at: $0), neverIndexed: isNeverIndexed(at: $0)) }
    }

    /// The values of every field named `name`, in order.
    public func values(of name: String) -> [String] {
        let wanted = Array(name.utf8)
        return indices.filter { index in
            let (entry, bytes) = entry(index)
            return Int(entry.nameLength) == wanted.count
                && wanted.withUnsafeBufferPointer { wanted in
                    wanted.isEmpty || memcmp(bytes + Int(entry.nameStart), wanted.baseAddress!, wanted.count) == 0
                }
        }.map { value(at: $0) }
    }

    /// The same fields, in the same order, with the same flags.
    public static func == (lhs: H2RequestHeaders, rhs: H2RequestHeaders) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for index in lhs.indices {
            let (left, leftBytes) = lhs.entry(index)
            let (right, rightBytes) = rhs.entry(index)
            guard left.nameLength == right.nameLength, left.valueLength == right.valueLength,
                  left.neverIndexed == right.neverIndexed else { return false }
            let length = Int(left.nameLength) + Int(left.valueLength)
            if length > 0, memcmp(leftBytes + Int(left.nameStart), rightBytes + Int(right.nameStart), length) != 0 {
                return false
            }
        }
        return true
    }

    private static func string(_ start: UnsafeMutablePointer<UInt8>, _ count: Int) -> String {
        guard count > 0 else { return "" }
        return String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    }
}
