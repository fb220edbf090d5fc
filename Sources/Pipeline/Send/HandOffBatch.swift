/// Elements a producer collects and then gives up whole to a `HandOffQueue`
/// (`put(moving:)`): they move into the queue's slots by the run, one copy for the batch, where an
/// array's elements leave one at a time (popped and then stored: two copies of each, of a worker's
/// records ~230 bytes apiece, and a uniqueness check per append). Owned by one thread.
struct HandOffBatch<Element>: ~Copyable {
    /// `count` elements from here on, then `capacity - count` uninitialized slots.
    private var base: UnsafeMutablePointer<Element>
    private var capacity: Int
    private(set) var count = 0

    /// An empty batch with room for `capacity` elements before it grows.
    init(capacity: Int) {
        self.capacity = Swift.max(1, capacity)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    mutating func append(_ element: consuming Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: element)
        count += 1
    }

    /// Moves elements `offset..<offset + moved` to `target` (uninitialized memory); their slots
    /// are then uninitialized until `removeMoved(_:)` drops them. For `HandOffQueue` only.
    /// `piece` elements a copy at most (`HandOffQueue.piece`).
    func move(from offset: Int, count moved: Int, to target: UnsafeMutablePointer<Element>, inPiecesOf piece: Int) {
        precondition(offset >= 0 && moved >= 0 && offset + moved <= count, "HandOffBatch: no such elements")
        var done = 0
        while done < moved {
            let now = Swift.min(piece, moved - done)
            (target + done).moveInitialize(from: base + offset + done, count: now)
            done += now
        }
    }

    /// Drops the first `moved` slots, whose elements `move` took, and moves the rest to the front.
    mutating func removeMoved(_ moved: Int) {
        precondition(moved >= 0 && moved <= count, "HandOffBatch: no such elements")
        if moved < count { base.moveInitialize(from: base + moved, count: count - moved) }
        count -= moved
    }

    private mutating func grow() {
        let larger = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = larger
        capacity *= 2
    }
}
