/// The batch a CSVParser is filling. Field bytes and bounds are written straight into the arrays
/// the batch will carry away, so a row costs no copy of its own: no per-row bounds array, no
/// per-field `append(contentsOf:)`.
///
/// `storage` and `bounds` are allocated ahead: their `count` is their capacity, and only the first
/// `bytesUsed`/`boundsUsed` elements have been written. The last `boundsPerRow` bounds
/// written are the row in progress (-1 until its field arrives); its bytes start at `rowStart`.
/// Nothing past what was written is ever read: `takeBatch` cuts the arrays to the finished rows.
struct CSVBatchBuilder {
    private var storage: [UInt8] = []
    private var bytesUsed = 0
    private var rowStart = 0
    private var bounds: [Int32] = []
    private var boundsUsed = 0
    private var numbers: [Int] = []
    private var problems: [Int: CSVRowProblem] = [:]
    private let boundsPerRow: Int

    /// `extraColumns`: the columns a payload template reads besides the known ones.
    init(extraColumns: Int = 0) {
        precondition(CSVBatch.knownBoundsPerRow == 2 * CSVColumn.allCases.count, "a start and an end per column")
        boundsPerRow = CSVBatch.knownBoundsPerRow + 2 * extraColumns
        openRow()
    }

    /// Rows finished and not yet taken.
    var rows: Int { numbers.count }

    /// The row in progress gets `column`'s field.
    mutating func append(_ bytes: UnsafeRawPointer?, count: Int, column: Int) {
        if storage.count - bytesUsed < count { Self.grow(&storage, used: bytesUsed, toHold: count) }
        let start = bytesUsed
        if count > 0, let bytes {
            storage.withUnsafeMutableBytes { target in
                target.baseAddress.map { ($0 + start).copyMemory(from: bytes, byteCount: count) }
            }
        }
        bytesUsed = start + count
        let slot = boundsUsed - boundsPerRow + 2 * column
        let end = bytesUsed
        bounds.withUnsafeMutableBufferPointer { bounds in
            bounds[slot] = Int32(start)
            bounds[slot + 1] = Int32(end)
        }
    }

    /// A whole row the fast path split (at most `bytes` of its fields' bytes kept), finished as data
    /// row `number`: what `append` for each field in a kept column (`columns[i]` for field i, -1 or
    /// past the end for none) and `endRow` make, with one pass over each array. Three uniqueness
    /// checks a row instead of seven, and no call a field.
    mutating func appendRecord(_ splitter: CSVFastSplitter, in raw: UnsafeRawPointer, bytes: Int, columns: [Int],
                               number: Int, problem: CSVRowProblem?) {
        if storage.count &- bytesUsed < bytes { Self.grow(&storage, used: bytesUsed, toHold: bytes) }
        let boundsPerRow = self.boundsPerRow
        if bounds.count &- boundsUsed < boundsPerRow { Self.grow(&bounds, used: boundsUsed, toHold: boundsPerRow) }
        let row = boundsUsed &- boundsPerRow
        let nextRow = boundsUsed
        var used = bytesUsed
        storage.withUnsafeMutableBytes { target in
            bounds.withUnsafeMutableBufferPointer { bounds in
                columns.withUnsafeBufferPointer { columns in
                    let spans = splitter.spans
                    for index in 0..<min(splitter.fieldCount, columns.count) {
                        let column = columns[index]
                        guard column >= 0 else { continue }
                        let (start, count) = splitter.bytes(of: spans[index], in: raw)
                        if count > 0 { (target.baseAddress! + used).copyMemory(from: start, byteCount: count) }
                        bounds[row &+ 2 &* column] = Int32(used)
                        used &+= count
                        bounds[row &+ 2 &* column &+ 1] = Int32(used)
                    }
                }
                for index in nextRow..<(nextRow &+ boundsPerRow) { bounds[index] = -1 }
            }
        }
        bytesUsed = used
        if let problem { problems[numbers.count] = problem }
        numbers.append(number)
        rowStart = used
        boundsUsed = nextRow &+ boundsPerRow
    }

    /// The row in progress is finished as data row `number`; the next one begins.
    mutating func endRow(number: Int, problem: CSVRowProblem?) {
        if let problem { problems[numbers.count] = problem }
        numbers.append(number)
        rowStart = bytesUsed
        openRow()
    }

    /// Hands out the finished rows; the row in progress moves to fresh arrays as large as these,
    /// so the next batch seldom grows.
    mutating func takeBatch() -> CSVBatch {
        let boundsPerRow = self.boundsPerRow
        let carried = bytesUsed - rowStart
        var nextStorage = Self.unwritten(UInt8.self, count: storage.count)
        var nextBounds = Self.unwritten(Int32.self, count: bounds.count)
        let inProgress = boundsUsed - boundsPerRow
        storage.withUnsafeBufferPointer { old in
            nextStorage.withUnsafeMutableBufferPointer { new in
                for index in 0..<carried { new[index] = old[rowStart + index] }
            }
        }
        let shift = Int32(rowStart)
        bounds.withUnsafeBufferPointer { old in
            nextBounds.withUnsafeMutableBufferPointer { new in
                for index in 0..<boundsPerRow {
                    let bound = old[inProgress + index]
                    new[index] = bound >= 0 ? bound - shift : bound
                }
            }
        }
        storage.removeSubrange(rowStart...)
        bounds.removeSubrange(inProgress...)
        let batch = CSVBatch(storage: storage, bounds: bounds, boundsPerRow: boundsPerRow, numbers: numbers,
                             problems: problems)

        storage = nextStorage
        bytesUsed = carried
        rowStart = 0
        bounds = nextBounds
        boundsUsed = boundsPerRow
        numbers = []
        numbers.reserveCapacity(batch.count)
        problems = [:]
        return batch
    }

    private mutating func openRow() {
        let boundsPerRow = self.boundsPerRow
        if bounds.count - boundsUsed < boundsPerRow { Self.grow(&bounds, used: boundsUsed, toHold: boundsPerRow) }
        let first = boundsUsed
        bounds.withUnsafeMutableBufferPointer { bounds in
            for index in first..<(first + boundsPerRow) { bounds[index] = -1 }
        }
        boundsUsed = first + boundsPerRow
    }

    /// Makes room for `toHold` more elements after the `used` written ones, at least doubling.
    private static func grow<Element: BitwiseCopyable>(_ array: inout [Element], used: Int, toHold extra: Int) {
        var larger = unwritten(Element.self, count: max(2 * array.count, used + extra, 1024))
        array.withUnsafeBufferPointer { old in
            larger.withUnsafeMutableBufferPointer { new in
                for index in 0..<used { new[index] = old[index] }
            }
        }
        array = larger
    }

    /// An array of `count` elements that are written before they are read (see the type's
    /// comment). Plain bytes and integers: leaving them unset spares a memset of every batch.
    /// None: `[]`, not the initializer, which with capacity 0 writes the count into the runtime's
    /// one shared empty array (ThreadSanitizer saw two parsers race there).
    private static func unwritten<Element: BitwiseCopyable>(_ type: Element.Type, count: Int) -> [Element] {
        guard count > 0 else { return [] }
        return [Element](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
    }
}
