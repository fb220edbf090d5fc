/// Per-stream records of one session, found in O(1) from nghttp2's stream user data.
///
/// A record's index travels through nghttp2 as the stream's user data (`index + 1` as a pointer bit
/// pattern), so callbacks find their stream without hashing. Indices are reused after `remove`; the
/// table keeps each index's stream id (0 when free) and `index(of:userData:)` checks it, so a stale
/// index never reaches a new stream.
///
/// Records live in memory the table owns and the subscript hands out their address
/// (`unsafeMutableAddress`), so `streams[i]?.field = value` updates in place: no copy of the record
/// and no heap-allocated `_modify` coroutine frame (seven per request in a profile). A class, so
/// the storage is never shared by two copies. Owned by its session's thread.
final class H2StreamTable<Record> {
    @exclusivity(unchecked) private var records: UnsafeMutablePointer<Record?>
    @exclusivity(unchecked) private var capacity: Int
    /// Always nil: what reading an index outside the table finds.
    private let outside: UnsafeMutablePointer<Record?>
    /// Slots in use so far (each holding a record or nil).
    @exclusivity(unchecked) private var slots = 0
    @exclusivity(unchecked) private var streamIDs: [Int32] = []
    @exclusivity(unchecked) private var freeIndices: [Int] = []
    @exclusivity(unchecked) private(set) var count = 0

    init(capacity: Int = 64) {
        self.capacity = capacity
        records = .allocate(capacity: capacity)
        outside = .allocate(capacity: 1)
        outside.initialize(to: nil)
    }

    deinit {
        records.deinitialize(count: slots)
        records.deallocate()
        outside.deinitialize(count: 1)
        outside.deallocate()
    }

    /// Stores `record`; its stream id may be set later with `setStreamID` (a client learns it on submit).
    func insert(_ record: consuming Record, streamID: Int32 = 0) -> Int {
        count += 1
        if let index = freeIndices.popLast() {
            // A free slot holds nil: nothing to release, so initializing over it is a plain move.
            (records + index).initialize(to: record)
            streamIDs[index] = streamID
            return index
        }
        if slots == capacity { grow() }
        (records + slots).initialize(to: record)
        streamIDs.append(streamID)
        slots += 1
        return slots - 1
    }

    private func grow() {
        let larger = UnsafeMutablePointer<Record?>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: records, count: slots)
        records.deallocate()
        records = larger
        capacity *= 2
    }

    func setStreamID(_ streamID: Int32, at index: Int) {
        streamIDs[index] = streamID
    }

    /// The index of `streamID`'s record, from the user data nghttp2 keeps for the stream.
    func index(of streamID: Int32, userData: UnsafeMutableRawPointer?) -> Int? {
        guard let index = Self.index(from: userData), index >= 0, index < streamIDs.count,
              streamIDs[index] == streamID, streamID != 0 else { return nil }
        return index
    }

    /// Whether `index` holds `streamID`'s record now (stream ids are never reused on a session).
    func index(_ index: Int, holds streamID: Int32) -> Bool {
        index >= 0 && index < streamIDs.count && streamID != 0 && streamIDs[index] == streamID
    }

    @discardableResult
    func remove(at index: Int) -> Record? {
        guard index >= 0, index < slots, records[index] != nil else { return nil }
        // Moved out, not copied: no retain and release of the record's references.
        let record = (records + index).move()
        (records + index).initialize(to: nil)
        streamIDs[index] = 0
        freeIndices.append(index)
        count -= 1
        return record
    }

    /// Runs `body` on the record at `index` in place; nil when the slot is free.
    func update<Result>(at index: Int, _ body: (inout Record) -> Result) -> Result? {
        guard index >= 0, index < slots, records[index] != nil else { return nil }
        return body(&records[index]!)
    }

    func removeAll() {
        records.deinitialize(count: slots)
        slots = 0
        streamIDs.removeAll(keepingCapacity: true)
        freeIndices.removeAll(keepingCapacity: true)
        count = 0
    }

    /// Every record still held, in index order.
    var all: [Record] {
        (0..<slots).compactMap { records[$0] }
    }

    /// The record at `index`; nil when the slot is free. Reading an index never handed out by
    /// `insert` also gives nil; writing one traps.
    subscript(index: Int) -> Record? {
        // Reads go through the address too, so `streams[i]?.field` copies the field, not the record.
        unsafeAddress { UnsafePointer(index >= 0 && index < slots ? records + index : outside) }
        unsafeMutableAddress {
            precondition(index >= 0 && index < slots, "H2StreamTable: index out of range")
            return records + index
        }
    }

    static func userData(for index: Int) -> UnsafeMutableRawPointer? {
        UnsafeMutableRawPointer(bitPattern: index + 1)
    }

    static func index(from userData: UnsafeMutableRawPointer?) -> Int? {
        guard let userData else { return nil }
        return Int(bitPattern: userData) - 1
    }
}
