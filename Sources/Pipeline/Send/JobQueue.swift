/// A FIFO of jobs with cheap pushes at both ends (a ring buffer would do as well; the ready list
/// is short-lived and small).
struct JobQueue {
    /// Jobs move in and out (`take()`), so keeping one here costs no retain or release.
    private var items: [Job?] = []
    private var head = 0

    var isEmpty: Bool { head == items.count }
    var count: Int { items.count - head }

    mutating func pushBack(_ job: Job) { items.append(job) }

    mutating func pushFront(_ job: Job) {
        if head > 0 {
            head -= 1
            items[head] = job
        } else {
            items.insert(job, at: 0)
        }
    }

    mutating func popFirst() -> Job? {
        guard head < items.count else { return nil }
        let job = items[head].take()
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        }
        return job
    }

    /// Moves up to `max` jobs from `queue` to the back; returns how many.
    mutating func takeBatch(from queue: HandOffQueue<Job>, max: Int) -> Int {
        let before = items.count
        queue.takeBatch(max: max, into: &items)
        return items.count - before
    }
}
