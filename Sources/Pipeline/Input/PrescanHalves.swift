import Synchronization
import Transport
#if canImport(Glibc)
import Glibc
#endif

/// The prescan's counting pass over a large plain file, made by two threads, one a half: the whole
/// `send` process is what an operator waits for, and the prescan is all of it before the first
/// request (~0.1 s a million rows on one thread). The halves meet at the first line break after
/// the middle; the second half is scanned as if a record began there, and the first half's scan,
/// on reaching it, says whether one did. Should it not have (a quoted field spans that line break),
/// the caller makes the one-thread pass instead, which is exact whatever the quoting.
///
/// Duplicate keys: the two scans share one Bloom filter, and each inserts only into its own half of
/// the blocks, so no block is written by two threads. A key for the other half is kept and handed
/// over in rounds: after each `Sizes.roundBytes` of its half, each thread waits for the other, inserts the
/// keys the other kept for it, waits again, and goes on. Every key is inserted once, by one thread,
/// so a key in both halves of the file is a suspect as surely as in one pass.
enum PrescanHalves {
    struct Sizes: Sendable {
        /// Smaller files are scanned by one thread: a second would not pay for itself.
        var minimumBytes: Int
        /// A half's bytes between two hand-overs: bounds the keys kept for the other (~8 bytes a row).
        var roundBytes: Int
        /// Cores the process must be able to use (`UsableCores`): two threads on one only take turns.
        var minimumCores = 2

        static let standard = Sizes(minimumBytes: 16 << 20, roundBytes: 32 << 20)
        /// One thread whatever the size (a test's reference).
        static let never = Sizes(minimumBytes: .max, roundBytes: 8 << 20)
    }
    /// How far past the middle the halves' meeting point is looked for.
    static let splitWindow = 64 << 10

    enum Outcome: Equatable {
        /// Records, the header's included, as one `CSVRecordCounter` counts them over the file.
        case counted(records: Int)
        /// Something strict libcsv would refuse: the caller asks libcsv for the exact error.
        case suspicious
    }

    /// Whether `path` is for two threads: a plain regular file of `sizes.minimumBytes` or more, for
    /// a process that may run on `sizes.minimumCores` or more (not under `taskset -c 1`, say).
    static func applies(path: String, sizes: Sizes) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int(info.st_size) >= sizes.minimumBytes,
              UsableCores.count() >= sizes.minimumCores, let file = try? InputFile(path: path) else { return false }
        return !file.isCompressed
    }

    /// Counts the records of `path` in two halves, feeding `scans` (the first for the first half;
    /// they share one filter) when given. nil: make the one-thread pass (no meeting point found,
    /// the halves disagreed, or a read failed); the scans are spent then.
    static func count(path: String, chunkSize: Int, roundBytes: Int,
                      scans: (first: DuplicateTokensScan, second: DuplicateTokensScan)?) -> Outcome? {
        guard let split = meetingPoint(path: path) else { return nil }
        scans?.first.ownHalf = 0
        scans?.second.ownHalf = 1
        let rounds = max(1, (max(split.offset, split.size - split.offset) + roundBytes - 1) / roundBytes)
        let shared = Shared()
        let second = ThreadBound(Half(path: path, start: split.offset, end: nil, startsAfterHeader: true,
                                      own: scans?.second, other: scans?.first))
        let secondDone = PipelineThread.start(name: "apns-bulk prescan") {
            second.value.run(rounds: rounds, roundBytes: roundBytes, chunkSize: chunkSize, shared: shared)
        }
        let first = Half(path: path, start: 0, end: split.offset, startsAfterHeader: false, own: scans?.first, other: scans?.second)
        first.run(rounds: rounds, roundBytes: roundBytes, chunkSize: chunkSize, shared: shared)
        secondDone.wait()
        // The first half decides: where it is wrong, so is the one-thread pass, at the same place.
        if first.counter.isSuspicious { return .suspicious }
        guard first.reachedEnd, first.counter.isBetweenRecords, !first.failed, !second.value.failed else { return nil }
        if second.value.counter.isSuspicious { return .suspicious }
        guard second.value.reachedEnd else { return nil }
        return .counted(records: first.counter.records + second.value.counter.records - 1)
    }

    /// The offset just after the first line break at or after the middle of the file, and the
    /// file's size; nil when there is none within `splitWindow` bytes.
    private static func meetingPoint(path: String) -> (offset: Int, size: Int)? {
        guard let file = try? InputFile(path: path) else { return nil }
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let size = Int(info.st_size)
        guard file.seek(to: size / 2) else { return nil }
        var window: [UInt8] = []
        guard (try? file.read(into: &window, limit: splitWindow)) == true,
              let lineBreak = window.firstIndex(of: 0x0A) else { return nil }
        return (size / 2 + lineBreak + 1, size)
    }

    /// What the two threads share: where they meet, and whether either gave up.
    // @unchecked: `meeting` is a pthread barrier, made to be waited on by several threads; `givenUp`
    // is an atomic.
    private final class Shared: @unchecked Sendable {
        private let meeting = UnsafeMutablePointer<pthread_barrier_t>.allocate(capacity: 1)
        let givenUp = Atomic<Bool>(false)

        init() { pthread_barrier_init(meeting, nil, 2) }

        deinit {
            pthread_barrier_destroy(meeting)
            meeting.deallocate()
        }

        /// Returns once the other thread has come here too.
        func meet() { _ = pthread_barrier_wait(meeting) }
    }

    /// One thread's half of the file and its scan. `other` is the other half's scan, whose kept keys
    /// this one inserts while both wait between rounds.
    private final class Half {
        let path: String
        let start: Int
        /// Where the half ends; nil: at the end of the file.
        let end: Int?
        let own: DuplicateTokensScan?
        let other: DuplicateTokensScan?
        var counter: CSVRecordCounter
        /// The half was read to its end (to the end of the file for the second).
        private(set) var reachedEnd = false
        /// A read failed, or the file ended before the first half did.
        private(set) var failed = false

        init(path: String, start: Int, end: Int?, startsAfterHeader: Bool, own: DuplicateTokensScan?, other: DuplicateTokensScan?) {
            self.path = path
            self.start = start
            self.end = end
            self.own = own
            self.other = other
            counter = CSVRecordCounter(startsAfterHeader: startsAfterHeader)
            counter.duplicates = own
        }

        func run(rounds: Int, roundBytes: Int, chunkSize: Int, shared: Shared) {
            let file = try? InputFile(path: path)
            if file?.seek(to: start) != true { give(up: shared) }
            var chunk: [UInt8] = []
            chunk.reserveCapacity(chunkSize)
            var position = start
            for round in 1...rounds {
                // The last round reads on to the end (of the file, for the second half).
                let roundEnd = round == rounds ? end ?? Int.max : min(end ?? Int.max, start + round * roundBytes)
                while let file, !shared.givenUp.load(ordering: .relaxed), position < roundEnd {
                    guard let more = try? file.read(into: &chunk, limit: min(chunkSize, roundEnd - position)) else {
                        give(up: shared)
                        break
                    }
                    guard more else {
                        // The file ended: where the second half should, or (shrunk) too soon.
                        if end != nil { give(up: shared) } else { reachedEnd = true }
                        break
                    }
                    position += chunk.count
                    chunk.withUnsafeBytes { counter.scan($0) }
                    if counter.isSuspicious { shared.givenUp.store(true, ordering: .relaxed) }
                }
                shared.meet()
                // Set by either before it came: both see the same, and leave together.
                if shared.givenUp.load(ordering: .relaxed) { return }
                if let own, let other { own.insert(othersKeys: other.othersKeys) }
                shared.meet()
                own?.othersKeys.removeAll(keepingCapacity: true)
            }
            if end == nil {
                counter.finish()
            } else {
                reachedEnd = position == end
            }
        }

        private func give(up shared: Shared) {
            failed = true
            shared.givenUp.store(true, ordering: .relaxed)
        }
    }
}
