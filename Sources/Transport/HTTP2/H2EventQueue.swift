/// A session's events waiting for `drainEvents`, first in, first out.
///
/// An array cost a uniqueness check per append, and draining it moved each event out past a
/// placeholder that was destroyed again with the array's contents (two destroys per event through
/// the enum's outlined witness). Here an event is moved in and moved out, nothing else. Events may
/// be appended while the queue drains (a handler calls back into its session). Owned by the
/// session's thread.
final class H2EventQueue<Event> {
    @exclusivity(unchecked) private var storage: UnsafeMutablePointer<Event>
    @exclusivity(unchecked) private var capacity: Int
    /// Events live in `head..<tail`.
    @exclusivity(unchecked) private var head = 0
    @exclusivity(unchecked) private var tail = 0

    init(capacity: Int = 64) {
        self.capacity = capacity
        storage = .allocate(capacity: capacity)
    }

    deinit {
        (storage + head).deinitialize(count: tail - head)
        storage.deallocate()
    }

    var isEmpty: Bool { head == tail }

    func append(_ event: consuming Event) {
        if tail == capacity { makeRoom() }
        (storage + tail).initialize(to: event)
        tail &+= 1
    }

    /// The oldest event, moved out; the queue must not be empty.
    func removeFirst() -> Event {
        precondition(head < tail, "H2EventQueue: empty")
        let event = (storage + head).move()
        head &+= 1
        if head == tail {
            head = 0
            tail = 0
        }
        return event
    }

    private func makeRoom() {
        let live = tail - head
        if live <= capacity / 2 {
            // The regions may overlap: moveInitialize copies as memmove does.
            storage.moveInitialize(from: storage + head, count: live)
        } else {
            let larger = UnsafeMutablePointer<Event>.allocate(capacity: capacity * 2)
            larger.moveInitialize(from: storage + head, count: live)
            storage.deallocate()
            storage = larger
            capacity *= 2
        }
        head = 0
        tail = live
    }
}
