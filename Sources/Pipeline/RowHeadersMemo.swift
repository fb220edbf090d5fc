#if canImport(Glibc)
import Glibc
#endif

/// The reader's memory of the last rows' own header columns: a campaign with a `topic` column
/// (several apps, several keys) repeats a handful of (topic, push type, priority, ...) values over
/// millions of rows, and each row decoding its own made four heap objects (strings, the checked
/// values, their fields) on the reader thread for a worker thread to free. A row whose header
/// fields are byte for byte those of a remembered row shares that row's `RowHeaders` (immutable).
/// Direct-mapped by an FNV-1a hash of the fields: a miss costs building the key once.
/// A row with its own `apns_id` (unique per row) is neither looked up nor remembered.
///
/// Reader thread only.
final class RowHeadersMemo {
    private static let slots = 64
    private var keys: [[UInt8]] = Array(repeating: [], count: RowHeadersMemo.slots)
    private var headers: [RowHeaders?] = Array(repeating: nil, count: RowHeadersMemo.slots)
    /// The row being decoded: its key, its slot, and whether it may be remembered.
    private var key: [UInt8] = []
    private var slot = 0
    private var remembers = false

    /// The headers of a remembered row with `columns` equal to row `index`'s, if any.
    func lookup(_ batch: borrowing CSVBatch, at index: Int, columns: [CSVColumn]) -> RowHeaders? {
        key.removeAll(keepingCapacity: true)
        remembers = true
        batch.storage.withUnsafeBufferPointer { storage in
            for column in columns {
                let range = batch.fieldRange(column, at: index) ?? 0..<0
                if column == .apnsID && !range.isEmpty { remembers = false }
                let count = UInt32(truncatingIfNeeded: range.count)
                withUnsafeBytes(of: count.littleEndian) { key.append(contentsOf: $0) }
                key.append(contentsOf: UnsafeBufferPointer(rebasing: storage[range]))
            }
        }
        guard remembers else { return nil }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        slot = Int(truncatingIfNeeded: hash ^ (hash >> 32)) & (Self.slots - 1)
        guard let found = headers[slot], keys[slot] == key else { return nil }
        return found
    }

    /// Remembers `decoded` as the headers of the row `lookup` was last asked for.
    func remember(_ decoded: RowHeaders) {
        guard remembers else { return }
        keys[slot] = key
        headers[slot] = decoded
    }
}
