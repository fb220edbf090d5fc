/// The rows of a campaign that already have a record in its result log, by row number: one bit
/// per row, so a resumed 10-million-row campaign holds 1.25 MB for it, not a set of integers.
/// Built before the run, then only read (by the reader thread).
public struct DoneRows: Sendable {
    /// Row r is bit r % 64 of word r / 64 (`RowBitmapFile` keeps the same layout on disk).
    private(set) var words: [UInt64] = []
    /// Rows marked.
    public private(set) var count = 0
    /// The highest row marked; 0 when none.
    public private(set) var highest = 0

    /// No row marked.
    public init() {}

    /// The rows of words in this layout (a `RowBitmapFile`'s).
    init(words: [UInt64]) {
        self.words = words
        count = words.reduce(0) { $0 + $1.nonzeroBitCount }
        highest = words.lastIndex { $0 != 0 }.map { ($0 << 6) + 63 - words[$0].leadingZeroBitCount } ?? 0
    }

    /// The rows marked here and in none of `others`.
    func subtracting(_ others: DoneRows...) -> DoneRows {
        var kept = words
        for other in others {
            for index in 0..<Swift.min(kept.count, other.words.count) { kept[index] &= ~other.words[index] }
        }
        return DoneRows(words: kept)
    }

    /// The rows marked here or in `other`.
    func union(_ other: DoneRows) -> DoneRows {
        var both = words.count >= other.words.count ? words : other.words
        let shorter = words.count >= other.words.count ? other.words : words
        for index in shorter.indices { both[index] |= shorter[index] }
        return DoneRows(words: both)
    }

    /// Calls `body` with each marked row, in order.
    func forEach(_ body: (Int) throws -> Void) rethrows {
        for (index, word) in words.enumerated() {
            var bits = word
            while bits != 0 {
                try body((index << 6) + bits.trailingZeroBitCount)
                bits &= bits &- 1
            }
        }
    }

    /// Marks `row` (1-based); false when it was marked already or is not a row number.
    @discardableResult
    public mutating func insert(_ row: Int) -> Bool {
        guard row > 0 else { return false }
        let word = row >> 6
        if word >= words.count {
            // Doubling, so a log read in row order grows the array a logarithmic number of times.
            words.append(contentsOf: repeatElement(0, count: Swift.max(word + 1 - words.count, words.count)))
        }
        let bit = UInt64(1) << UInt64(row & 63)
        guard words[word] & bit == 0 else { return false }
        words[word] |= bit
        count += 1
        highest = Swift.max(highest, row)
        return true
    }

    /// Whether `row` has a record; false for a row never marked, however large.
    @inline(__always)
    public func contains(_ row: Int) -> Bool {
        let word = row >> 6
        guard row > 0, word < words.count else { return false }
        return words[word] & (UInt64(1) << UInt64(row & 63)) != 0
    }

    /// Rows 1...`rows` without a mark.
    public func missing(through rows: Int) -> Int {
        var marked = 0
        let fullWords = Swift.min((rows + 1) >> 6, words.count)
        for index in 0..<fullWords { marked += words[index].nonzeroBitCount }
        var row = fullWords << 6
        while row <= rows {
            if contains(row) { marked += 1 }
            row += 1
        }
        return rows - marked
    }

    /// Rows 1...`row` marked here and in neither `done` nor `aborted`: a shard's rows (`--shard`,
    /// marked by its prescan) that a resume finds unrecorded.
    func count(notIn done: DoneRows, _ aborted: DoneRows, through row: Int) -> Int {
        guard row > 0 else { return 0 }
        func word(_ rows: DoneRows, _ index: Int) -> UInt64 { index < rows.words.count ? rows.words[index] : 0 }
        let last = Swift.min(row >> 6, words.count - 1)
        guard last >= 0 else { return 0 }
        var found = 0
        for index in 0...last {
            var bits = words[index] & ~word(done, index) & ~word(aborted, index)
            if index == row >> 6 { bits &= row & 63 == 63 ? ~0 : (UInt64(1) << UInt64(row & 63 + 1)) &- 1 }
            found += bits.nonzeroBitCount
        }
        return found
    }
}
