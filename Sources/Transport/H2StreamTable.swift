/// Per-stream records of one session, found in O(1) from nghttp2's stream user data.
///
/// A record's index travels through nghttp2 as the stream's user data (`index + 1` as a pointer bit
/// pattern), so callbacks find their stream without hashing. Indices are reused after `remove`; the
/// table keeps each index's stream id (0 when free) and `index(of:userData:)` checks it, so a stale
/// index never reaches a new stream.
struct H2StreamTable<Record> {
    private(set) var records: [Record?] = []
    private var streamIDs: [Int32] = []
    private var freeIndices: [Int] = []
    private(set) var count = 0

    /// Stores `record`; its stream id may be set later with `setStreamID` (a client learns it on submit).
    mutating func insert(_ record: Record, streamID: Int32 = 0) -> Int {
        count += 1
        if let index = freeIndices.popLast() {
            records[index] = record
            streamIDs[index] = streamID
            return index
        }
        records.append(record)
        streamIDs.append(streamID)
        return records.count - 1
    }

    mutating func setStreamID(_ streamID: Int32, at index: Int) {
        streamIDs[index] = streamID
    }

    /// The index of `streamID`'s record, from the user data nghttp2 keeps for the stream.
    func index(of streamID: Int32, userData: UnsafeMutableRawPointer?) -> Int? {
        guard let index = Self.index(from: userData), index >= 0, index < streamIDs.count,
              streamIDs[index] == streamID, streamID != 0 else { return nil }
        return index
    }

    @discardableResult
    mutating func remove(at index: Int) -> Record? {
        guard index >= 0, index < records.count, let record = records[index] else { return nil }
        records[index] = nil
        streamIDs[index] = 0
        freeIndices.append(index)
        count -= 1
        return record
    }

    mutating func removeAll() {
        records.removeAll(keepingCapacity: true)
        streamIDs.removeAll(keepingCapacity: true)
        freeIndices.removeAll(keepingCapacity: true)
        count = 0
    }

    subscript(index: Int) -> Record? {
        get { index >= 0 && index < records.count ? records[index] : nil }
        _modify {
            precondition(index >= 0 && index < records.count, "H2StreamTable: index out of range")
            yield &records[index]
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
