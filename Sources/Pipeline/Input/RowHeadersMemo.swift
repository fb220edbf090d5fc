#if canImport(Glibc)
import Glibc
#endif

/// The reader's memory of the last rows' own header columns: a campaign with a `topic` column
/// (several apps, several keys) repeats a handful of (topic, push type, priority, ...) values over
/// millions of rows, and each row decoding its own made four heap objects (strings, the checked
/// values, their fields) on the reader thread for a worker thread to free. A row whose header
/// fields are byte for byte those of a remembered row shares that row's `RowHeaders` (immutable).
/// Two-way set-associative by a hash of the fields taken eight bytes at a time: a miss costs building the key once.
/// A row with its own `apns_id` (unique per row) is neither looked up nor remembered.
///
/// Reader thread only.
final class RowHeadersMemo {
    private static let slots = 128
    // Reader thread only: no dynamic exclusivity checks (they were ~700 instructions a row).
    /// By slot: the remembered row's fields, each as its length (4 bytes, little-endian) and bytes.
    @exclusivity(unchecked) private var keys: [[UInt8]] = Array(repeating: [], count: RowHeadersMemo.slots)
    @exclusivity(unchecked) private var headers: [RowHeaders?] = Array(repeating: nil, count: RowHeadersMemo.slots)
    /// The row being decoded: its key (made on a miss only), its slot, and whether it may be remembered.
    @exclusivity(unchecked) private var key: [UInt8] = []
    @exclusivity(unchecked) private var slot = 0
    @exclusivity(unchecked) private var remembers = false
    /// By set: the way found or filled last.
    @exclusivity(unchecked) private var recent = [UInt8](repeating: 0, count: RowHeadersMemo.slots / 2)

    /// The headers of a remembered row with `columns` equal to row `index`'s, if any. A hit hashes
    /// the fields and compares them in place; only a miss copies them into a key for `remember`.
    func lookup(_ batch: borrowing CSVBatch, at index: Int, columns: [CSVColumn]) -> RowHeaders? {
        var memorable = true
        let found: RowHeaders? = batch.storage.withUnsafeBufferPointer { storage in
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for column in columns {
                let range = batch.fieldRange(column, at: index) ?? 0..<0
                if column == .apnsID && !range.isEmpty {
                    memorable = false
                    return nil
                }
                hash = Self.mix(hash, UInt64(range.count))
                hash = Self.hash(UnsafeBufferPointer(rebasing: storage[range]), into: hash)
            }
            // Two ways a set: a handful of header sets in a table of 64 direct-mapped slots
            // collided often enough (ten topics: about one chance in two) to decode some rows anew.
            let set = Int(truncatingIfNeeded: hash ^ (hash >> 32)) & (Self.slots / 2 - 1)
            for way in 0..<2 {
                slot = 2 * set + way
                if let remembered = headers[slot], Self.matches(keys[slot], storage, batch, index, columns) {
                    recent[set] = UInt8(way)
                    return remembered
                }
            }
            // A miss replaces the way used less recently.
            slot = 2 * set + (recent[set] == 0 ? 1 : 0)
            recent[set] = UInt8(slot & 1)
            key.removeAll(keepingCapacity: true)
            for column in columns {
                let range = batch.fieldRange(column, at: index) ?? 0..<0
                let count = UInt32(truncatingIfNeeded: range.count)
                withUnsafeBytes(of: count.littleEndian) { key.append(contentsOf: $0) }
                key.append(contentsOf: UnsafeBufferPointer(rebasing: storage[range]))
            }
            return nil
        }
        // A row without its own apns-id that was not found is remembered once decoded.
        remembers = memorable && found == nil
        return found
    }

    /// Remembers `decoded` as the headers of the row `lookup` was last asked for.
    func remember(_ decoded: RowHeaders) {
        guard remembers else { return }
        keys[slot] = key
        headers[slot] = decoded
    }

    /// Whether `stored` holds row `index`'s `columns`, length and bytes each.
    private static func matches(_ stored: [UInt8], _ storage: UnsafeBufferPointer<UInt8>, _ batch: borrowing CSVBatch,
                                _ index: Int, _ columns: [CSVColumn]) -> Bool {
        stored.withUnsafeBufferPointer { stored in
            guard let base = stored.baseAddress, let source = storage.baseAddress else { return false }
            var offset = 0
            for column in columns {
                let range = batch.fieldRange(column, at: index) ?? 0..<0
                guard offset + 4 + range.count <= stored.count,
                      UInt32(littleEndian: UnsafeRawPointer(base + offset).loadUnaligned(as: UInt32.self)) == UInt32(range.count),
                      range.isEmpty || memcmp(base + offset + 4, source + range.lowerBound, range.count) == 0 else { return false }
                offset += 4 + range.count
            }
            return offset == stored.count
        }
    }

    @inline(__always)
    private static func mix(_ hash: UInt64, _ word: UInt64) -> UInt64 {
        let mixed = (hash ^ word) &* 0x9e37_79b9_7f4a_7c15
        return mixed ^ (mixed >> 29)
    }

    /// The bytes into `hash`, eight at a time (the last few zero-padded).
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>, into hash: UInt64) -> UInt64 {
        guard let base = bytes.baseAddress else { return hash }
        var hash = hash
        var offset = 0
        while offset + 8 <= bytes.count {
            hash = mix(hash, UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self))
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count {
            tail |= UInt64(base[offset]) << shift
            shift += 8
            offset += 1
        }
        return mix(hash, tail)
    }
}
