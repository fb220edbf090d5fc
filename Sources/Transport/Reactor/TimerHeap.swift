/// Names one scheduled timer. Cancelling a timer that already fired or was cancelled does nothing,
/// even when its slot has since been reused (the generation tells them apart).
public struct TimerID: Hashable, Sendable {
    let slot: UInt32
    let generation: UInt32
}

/// The reactor's timers: a binary min-heap on (deadline, scheduling order) with O(log n) cancel.
///
/// Cancellation removes the entry at once instead of leaving a tombstone, so a connection that arms
/// and cancels a timer per request keeps the heap the size of what is really pending.
/// Single-threaded: owned by one `Reactor`.
struct TimerHeap {
    private struct Node {
        var deadline: UInt64
        var sequence: UInt64
        var slot: UInt32
    }

    private struct Slot {
        var generation: UInt32 = 0
        var heapIndex: Int = -1
        var action: (() -> Void)?
    }

    private var nodes: [Node] = []
    private var slots: [Slot] = []
    private var freeSlots: [UInt32] = []
    private var nextSequence: UInt64 = 0

    var count: Int { nodes.count }
    var isEmpty: Bool { nodes.isEmpty }

    /// The earliest deadline, in monotonic nanoseconds.
    var nextDeadline: UInt64? { nodes.first?.deadline }

    mutating func schedule(at deadline: UInt64, _ action: @escaping () -> Void) -> TimerID {
        let slot: UInt32
        if let reused = freeSlots.popLast() {
            slot = reused
        } else {
            slot = UInt32(slots.count)
            slots.append(Slot())
        }
        slots[Int(slot)].action = action
        nodes.append(Node(deadline: deadline, sequence: nextSequence, slot: slot))
        nextSequence &+= 1
        slots[Int(slot)].heapIndex = nodes.count - 1
        siftUp(nodes.count - 1)
        return TimerID(slot: slot, generation: slots[Int(slot)].generation)
    }

    /// Returns true when the timer was still pending.
    @discardableResult
    mutating func cancel(_ id: TimerID) -> Bool {
        guard Int(id.slot) < slots.count else { return false }
        let slot = slots[Int(id.slot)]
        guard slot.generation == id.generation, slot.heapIndex >= 0 else { return false }
        remove(at: slot.heapIndex)
        return true
    }

    /// Removes and returns the action of the earliest timer due at `now`, if any.
    mutating func popDue(now: UInt64) -> (() -> Void)? {
        guard let first = nodes.first, first.deadline <= now else { return nil }
        let action = slots[Int(first.slot)].action
        remove(at: 0)
        return action
    }

    mutating func removeAll() {
        nodes.removeAll()
        slots.removeAll()
        freeSlots.removeAll()
    }

    private mutating func remove(at index: Int) {
        let slot = nodes[index].slot
        release(slot)
        let last = nodes.count - 1
        if index != last {
            nodes[index] = nodes[last]
            slots[Int(nodes[index].slot)].heapIndex = index
        }
        nodes.removeLast()
        if index < nodes.count {
            siftDown(index)
            siftUp(index)
        }
    }

    private mutating func release(_ slot: UInt32) {
        slots[Int(slot)].action = nil
        slots[Int(slot)].heapIndex = -1
        slots[Int(slot)].generation &+= 1
        freeSlots.append(slot)
    }

    private func precedes(_ a: Node, _ b: Node) -> Bool {
        a.deadline != b.deadline ? a.deadline < b.deadline : a.sequence < b.sequence
    }

    private mutating func swapNodes(_ i: Int, _ j: Int) {
        nodes.swapAt(i, j)
        slots[Int(nodes[i].slot)].heapIndex = i
        slots[Int(nodes[j].slot)].heapIndex = j
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(nodes[child], nodes[parent]) else { return }
            swapNodes(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < nodes.count else { return }
            var smallest = left
            let right = left + 1
            if right < nodes.count, precedes(nodes[right], nodes[left]) { smallest = right }
            guard precedes(nodes[smallest], nodes[parent]) else { return }
            swapNodes(parent, smallest)
            parent = smallest
        }
    }
}
