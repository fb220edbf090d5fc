/// A worker's jobs whose requests are in flight, found by the tag their request carries.
///
/// The tag is the job's slot here (low 24 bits) and its row (the bits above), so finding a job is
/// an array index, not a hash lookup (a dictionary keyed by row cost ~600 instructions per row),
/// and a tag whose slot has since gone to another job finds nothing.
struct InFlightJobs {
    private static let slotBits: UInt64 = 24
    private static let slotMask: UInt64 = (1 << slotBits) - 1

    private var jobs: [Job?] = []
    private var freeSlots: [Int] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// The tag `insert` gives a job of row `row` if it is the next call on the table: a sender tags
    /// the request first and moves the job in only once the request was taken.
    func nextTag(row: Int) -> UInt64 {
        let slot = freeSlots.last ?? jobs.count
        precondition(UInt64(slot) <= Self.slotMask, "InFlightJobs: more than 2^24 requests in flight")
        return UInt64(row) << Self.slotBits | UInt64(slot)
    }

    /// Stores `job`; returns the tag for its request (`nextTag(row: job.row)`).
    @discardableResult
    mutating func insert(_ job: consuming Job) -> UInt64 {
        let tag = nextTag(row: job.row)
        let slot = Int(tag & Self.slotMask)
        if slot < jobs.count {
            freeSlots.removeLast()
            jobs[slot] = consume job
        } else {
            jobs.append(consume job)
        }
        count += 1
        return tag
    }

    /// Takes out the job `tag` names; nil when there is none (already taken).
    mutating func remove(tag: UInt64) -> Job? {
        let slot = Int(tag & Self.slotMask)
        guard slot < jobs.count, let row = jobs[slot]?.row, UInt64(row) == tag >> Self.slotBits else { return nil }
        freeSlots.append(slot)
        count -= 1
        // Moved out, not copied: no retain here and no release of the slot's old reference.
        return jobs[slot].take()
    }
}
