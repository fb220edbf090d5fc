/// Per-stream records of one session, found in O(1) from nghttp2's stream user data.
///
/// A record's index travels through nghttp2 as the stream's user data (`index + 1` as a pointer bit
/// pattern), so callbacks find their stream without hashing. Indices are reused after `remove`;
/// every record keeps its stream id and callers check it, so a stale index never reaches a new stream.
struct H2StreamTable<Record> {
    private(set) var records: [Record?] = []
    private var freeIndices: [Int] = []
    private(set) var count = 0

    mutating func insert(_ record: Record) -> Int {
        count += 1
        if let index = freeIndices.popLast() {
            records[index] = record
            return index
        }
        records.append(record)
        return records.count - 1
    }

    @discardableResult
    mutating func remove(at index: Int) -> Record? {
        guard index >= 0, index < records.count, let record = records[index] else { return nil }
        records[index] = nil
        freeIndices.append(index)
        count -= 1
        return record
    }

    mutating func removeAll() {
        records.removeAll(keepingCapacity: true)
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
