import APNs
import Testing
@testable import Pipeline

@Suite struct InFlightJobsTests {
    private static let headers = RowHeaders(try! NotificationHeaders(parsing: HeaderValues(topic: "com.example.app"),
                                                                    auth: .token))

    private func job(_ row: Int) -> Job {
        Job(row: row, RowBytes(copying: Array("ab".utf8)[...], lowercaseToken: nil, payload: Array("{}".utf8)[...],
                               headers: Self.headers))
    }

    @Test func eachTagFindsItsJobOnceAndSlotsAreReused() {
        var table = InFlightJobs()
        let jobs = (1...5).map(job)
        let tags = jobs.map { table.insert($0) }
        #expect(Set(tags).count == 5)
        #expect(table.count == 5)
        #expect(table.remove(tag: tags[2]) === jobs[2])
        #expect(table.remove(tag: tags[2]) == nil, "a tag finds its job only once")
        let later = job(99)
        let reusedTag = table.insert(later)
        #expect(reusedTag & 0xFF_FFFF == tags[2] & 0xFF_FFFF, "the freed slot is reused")
        #expect(table.remove(tag: tags[2]) == nil, "an old tag does not find the slot's new job")
        #expect(table.remove(tag: reusedTag) === later)
        for (index, tag) in tags.enumerated() where index != 2 { #expect(table.remove(tag: tag) === jobs[index]) }
        let empty = table.isEmpty
        #expect(empty)
    }

    @Test func nextTagIsTheTagInsertGivesAFreshOrReusedSlot() {
        var table = InFlightJobs()
        let first = job(1), second = job(2), third = job(3)
        let predicted = table.nextTag(row: 1)
        #expect(table.nextTag(row: 1) == predicted, "asking does not take the slot")
        #expect(table.insert(first) == predicted)
        let secondTag = table.insert(second)
        #expect(table.remove(tag: predicted) === first)
        let reused = table.nextTag(row: 3)
        #expect(reused & 0xFF_FFFF == predicted & 0xFF_FFFF, "the freed slot comes next")
        #expect(table.insert(third) == reused)
        #expect(table.remove(tag: secondTag) === second)
        #expect(table.remove(tag: reused) === third)
        let empty = table.isEmpty
        #expect(empty)
    }

    /// Past the table's first room (64 slots) it grows with every job still found by its tag, and
    /// the jobs still in it when it goes are released with it.
    @Test func aGrowingTableKeepsEveryJobAndReleasesWhatItHoldsWhenItGoes() {
        weak var kept: Job?
        do {
            var table = InFlightJobs()
            let jobs = (0..<300).map(job)
            var tags = jobs.prefix(150).map { table.insert($0) }
            for index in stride(from: 0, to: 150, by: 2) { #expect(table.remove(tag: tags[index]) === jobs[index]) }
            tags += jobs[150...].map { table.insert($0) }
            #expect(table.count == 225)
            for index in stride(from: 1, to: 300, by: 2) { #expect(table.remove(tag: tags[index]) === jobs[index]) }
            for index in stride(from: 150, to: 300, by: 2) { #expect(table.remove(tag: tags[index]) === jobs[index]) }
            let empty = table.isEmpty
            #expect(empty)
            let last = job(7)
            kept = last
            table.insert(last)
        }
        #expect(kept == nil)
    }

    @Test func rowsBeyondTheSlotBitsStillFindTheirJob() {
        var table = InFlightJobs()
        let big = job(1 << 30 + 7)
        let tag = table.insert(big)
        #expect(table.remove(tag: tag) === big)
        #expect(table.remove(tag: 0) == nil)
        #expect(table.remove(tag: UInt64.max) == nil)
    }
}
