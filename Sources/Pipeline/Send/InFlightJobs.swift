/// A worker's jobs whose requests are in flight, found by the tag their request carries.
///
/// The tag is the job's slot here (low 24 bits) and its row (the bits above), so finding a job is
/// an array index, not a hash lookup (a dictionary keyed by row cost ~600 instructions per row),
/// and a tag whose slot has since gone to another job finds nothing. The slots and the stack of
/// free ones are memory this table owns, not arrays: no uniqueness or bounds check per request (two
/// of each on the way in and out, ~90 instructions a row).
struct InFlightJobs: ~Copyable {
    private static let slotBits: UInt64 = 24
    private static let slotMask: UInt64 = (1 << slotBits) - 1

    /// Slots `0..<used` hold a job or, when free, nil; the free ones' indexes are on `freeSlots`.
    private var jobs: UnsafeMutablePointer<Job?>
    private var freeSlots: UnsafeMutablePointer<Int>
    private var capacity: Int
    private var used = 0
    private var freeCount = 0
    private(set) var count = 0

    init() {
        capacity = 64
        jobs = .allocate(capacity: capacity)
        freeSlots = .allocate(capacity: capacity)
    }

    deinit {
        jobs.deinitialize(count: used)
        jobs.deallocate()
        freeSlots.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    /// The tag `insert` gives a job of row `row` if it is the next call on the table: a sender tags
    /// the request first and moves the job in only once the request was taken.
    func nextTag(row: Int) -> UInt64 {
        let slot = freeCount > 0 ? freeSlots[freeCount &- 1] : used
        precondition(UInt64(slot) <= Self.slotMask, "InFlightJobs: more than 2^24 requests in flight")
        return UInt64(row) << Self.slotBits | UInt64(slot)
    }

    /// Stores `job`; returns the tag for its request (`nextTag(row: job.row)`).
    @discardableResult
    mutating func insert(_ job: consuming Job) -> UInt64 {
        let tag = nextTag(row: job.row)
        let slot = Int(tag & Self.slotMask)
        if freeCount > 0 {
            freeCount &-= 1
        } else {
            if used == capacity { grow() }
            used &+= 1
        }
        // A free slot holds nil, nothing to release: initialized over, not assigned.
        (jobs + slot).initialize(to: consume job)
        count &+= 1
        return tag
    }

    /// Takes out the job `tag` names; nil when there is none (already taken).
    mutating func remove(tag: UInt64) -> Job? {
        let slot = Int(tag & Self.slotMask)
        guard slot < used else { return nil }
        // Moved out, not copied: no retain here and no release of the slot's old reference.
        guard let job = (jobs + slot).move() else {
            (jobs + slot).initialize(to: nil)
            return nil
        }
        guard UInt64(job.row) == tag >> Self.slotBits else {
            (jobs + slot).initialize(to: job)
            return nil
        }
        (jobs + slot).initialize(to: nil)
        freeSlots[freeCount] = slot
        freeCount &+= 1
        count &-= 1
        return job
    }

    private mutating func grow() {
        let larger = UnsafeMutablePointer<Job?>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: jobs, count: used)
        jobs.deallocate()
        jobs = larger
        let largerFree = UnsafeMutablePointer<Int>.allocate(capacity: capacity * 2)
        largerFree.moveInitialize(from: freeSlots, count: freeCount)
        freeSlots.deallocate()
        freeSlots = largerFree
        capacity *= 2
    }
}
