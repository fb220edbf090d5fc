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

    /// Stores `job`; returns the tag for its request.
    mutating func insert(_ job: Job) -> UInt64 {
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            jobs[slot] = job
        } else {
            slot = jobs.count
            precondition(UInt64(slot) <= Self.slotMask, "InFlightJobs: more than 2^24 requests in flight")
            jobs.append(job)
        }
        count += 1
        return UInt64(job.row) << Self.slotBits | UInt64(slot)
    }

    /// Takes out the job `tag` names; nil when there is none (already taken).
    mutating func remove(tag: UInt64) -> Job? {
        let slot = Int(tag & Self.slotMask)
        guard slot < jobs.count, let job = jobs[slot], UInt64(job.row) == tag >> Self.slotBits else { return nil }
        jobs[slot] = nil
        freeSlots.append(slot)
        count -= 1
        return job
    }
}
