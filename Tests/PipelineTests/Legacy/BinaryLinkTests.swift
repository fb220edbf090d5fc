import Testing
@testable import Pipeline

/// A binary connection's window: identifiers map back to rows, an error response splits it, and
/// the quiet period releases the oldest.
@Suite struct BinaryLinkTests {
    static func job(_ row: Int) -> Job {
        Job(row: row, RowBytes(copying: Array(String(repeating: "ab", count: 32).utf8)[...], lowercaseToken: nil,
                               payload: Array("{}".utf8)[...], headers: nil))
    }

    static func link(sending rows: ClosedRange<Int>) -> (BinaryLink, [UInt32]) {
        let link = BinaryLink(slot: ConnectionSlot(id: 0, endpointIndex: 0, addressIndex: 0), windowLimit: 10_000)
        let identifiers = rows.map { link.append(job($0), at: UInt64($0) * 1000) }
        return (link, identifiers)
    }

    @Test func errorResponseSplitsTheWindowAtItsIdentifier() {
        let (link, identifiers) = Self.link(sending: 1...6)
        #expect(identifiers == [1, 2, 3, 4, 5, 6])
        let (before, failed, after) = link.split(at: 3, refusal: true)
        #expect(before.map(\.job.row) == [1, 2])
        #expect(failed?.job.row == 3)
        #expect(after.map(\.job.row) == [4, 5, 6])
        #expect(link.unconfirmedCount == 0)
    }

    @Test func anIdentifierNoLongerHeldLeavesEverythingAfterIt() {
        let (link, _) = Self.link(sending: 1...4)
        _ = link.takeQuiet(sentBefore: 2000)
        let (before, failed, after) = link.split(at: 2, refusal: true)
        #expect(before.isEmpty && failed == nil)
        #expect(after.map(\.job.row) == [3, 4])
    }

    @Test func quietPeriodReleasesTheOldestInOrder() {
        let (link, _) = Self.link(sending: 1...5)
        #expect(link.takeQuiet(sentBefore: 2500).map(\.job.row) == [1, 2])
        #expect(link.takeQuiet(sentBefore: 2500).isEmpty)
        #expect(link.unconfirmedCount == 3)
        #expect(link.takeAll().map(\.job.row) == [3, 4, 5])
    }

    @Test func windowStartsSmallHalvesOnEachRefusalAndGrowsBackWhileNotificationsGoThrough() {
        let link = BinaryLink(slot: ConnectionSlot(id: 0, endpointIndex: 0, addressIndex: 0), windowLimit: 1000)
        #expect(link.window.size == BinaryWindow.initialSize)
        for row in 1...100 { _ = link.append(Self.job(row), at: UInt64(row)) }
        #expect(!link.hasRoom, "a first flight fills the window")
        // The gateway refuses the 41st: the 40 before it went through, then the window halves.
        _ = link.split(at: 41, refusal: true)
        #expect(link.window.size == (100 + 40) / 2)
        // A round with no error response: everything sent went through, and room opens again.
        for row in 1...70 { _ = link.append(Self.job(row), at: 1_000 + UInt64(row)) }
        #expect(!link.hasRoom)
        link.advanceThrough(sentBefore: 2_000)
        #expect(link.window.size == 140 && link.hasRoom && link.atRiskCount == 0)
        // Never beyond --binary-window, and a silent close halves it as a refusal does.
        for round in 0..<10 {
            let start = 10_000 * UInt64(round + 1)
            for row in 1...link.window.size { _ = link.append(Self.job(row), at: start + UInt64(row)) }
            link.advanceThrough(sentBefore: start + 5_000)
            _ = link.takeQuiet(sentBefore: start + 5_000)
        }
        #expect(link.window.size == 1000)
        link.closedSilently()
        #expect(link.window.size == 500)
        // A shutdown (status 10) is no refusal: the window keeps its size.
        let last = link.append(Self.job(1), at: 200_000)
        _ = link.split(at: last, refusal: false)
        #expect(link.window.size == 500)
    }
}
