import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Jobs whose rows are done, kept for the reader to fill with new rows (`Job.reuse`).
///
/// A job is allocated on the reader thread and let go on a reactor thread: glibc then took its slow
/// paths both ways (the freeing thread's cache fills, the allocating thread's stays empty), about
/// 420 instructions a row in callgrind. Here a worker gives back its spent jobs 256 at a time
/// (`SpentJobs`) and the reader takes them 256 at a time (`JobSpares`): one lock per 256 rows.
/// Shared by the reader and the workers behind its pthread mutex (not a `Synchronization.Mutex`: the
/// jobs' fields, written on a reactor and rewritten on the reader, are ordered by this lock, and
/// ThreadSanitizer sees a pthread mutex but not Mutex's futex); `batchCount` mirrors `batches` for a
/// lock-free look.
// @unchecked: `batches` is touched only under `mutex`; `batchCount` is an atomic.
final class JobPool: @unchecked Sendable {
    /// Jobs handed over at a time.
    static let batchSize = 256
    /// Batches kept at most; jobs beyond them are let go (the queues' bound keeps this rarely reached).
    static let maxBatches = 64
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var batches: [[Job]] = []
    private let batchCount = Atomic<Int>(0)

    init() { pthread_mutex_init(mutex, nil) }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Keeps `jobs` (spent: `Job.spend()` said so) unless the pool is full; let go outside the lock.
    func give(_ jobs: consuming [Job]) {
        var jobs = jobs
        pthread_mutex_lock(mutex)
        if batches.count < Self.maxBatches {
            batches.append(jobs)
            batchCount.store(batches.count, ordering: .relaxed)
            jobs = []
        }
        pthread_mutex_unlock(mutex)
        _ = consume jobs
    }

    /// A batch of spent jobs, or nil when there is none (without taking the lock).
    func take() -> [Job]? {
        guard batchCount.load(ordering: .relaxed) > 0 else { return nil }
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        let batch = batches.popLast()
        batchCount.store(batches.count, ordering: .relaxed)
        return batch
    }
}

/// The reader's supply of spent jobs from `pool`. Owned by the reader thread.
final class JobSpares {
    private let pool: JobPool
    @exclusivity(unchecked) private var jobs: [Job] = []

    init(pool: JobPool) { self.pool = pool }

    /// A spent job to reuse, or nil (allocate one).
    func next() -> Job? {
        if let job = jobs.popLast() { return job }
        guard let batch = pool.take() else { return nil }
        jobs = batch
        return jobs.popLast()
    }
}

/// A worker's spent jobs on their way back to the reader (`JobPool`). Owned by the worker's thread.
struct SpentJobs {
    private var jobs: [Job] = []

    /// Keeps `job` if nothing else holds it and it is spent (`Job.spend()`); true when a batch is
    /// full and should go to the pool (`hand(to:)`).
    mutating func keep(_ job: consuming Job) -> Bool {
        guard isKnownUniquelyReferenced(&job), job.spend() else { return false }
        if jobs.isEmpty { jobs.reserveCapacity(JobPool.batchSize) }
        jobs.append(job)
        return jobs.count >= JobPool.batchSize
    }

    mutating func hand(to pool: JobPool) {
        var batch: [Job] = []
        swap(&batch, &jobs)
        pool.give(batch)
    }
}
