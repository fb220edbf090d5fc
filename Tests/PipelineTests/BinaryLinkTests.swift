import Testing
@testable import Pipeline

/// A binary connection's window: identifiers map back to rows, an error response splits it, and
/// the quiet period releases the oldest.
@Suite struct BinaryLinkTests {
    static func job(_ row: Int) -> Job {
        Job(row: row, deviceToken: Array(String(repeating: "ab", count: 32).utf8)[...], lowercaseToken: nil,
            payload: Array("{}".utf8)[...], headers: nil)
    }

    static func link(sending rows: ClosedRange<Int>) -> (BinaryLink, [UInt32]) {
        let link = BinaryLink(slot: ConnectionSlot(id: 0, endpointIndex: 0, addressIndex: 0))
        let identifiers = rows.map { link.append(job($0), at: UInt64($0) * 1000) }
        return (link, identifiers)
    }

    @Test func errorResponseSplitsTheWindowAtItsIdentifier() {
        let (link, identifiers) = Self.link(sending: 1...6)
        #expect(identifiers == [1, 2, 3, 4, 5, 6])
        let (before, failed, after) = link.split(at: 3)
        #expect(before.map(\.job.row) == [1, 2])
        #expect(failed?.job.row == 3)
        #expect(after.map(\.job.row) == [4, 5, 6])
        #expect(link.unconfirmedCount == 0)
    }

    @Test func anIdentifierNoLongerHeldLeavesEverythingAfterIt() {
        let (link, _) = Self.link(sending: 1...4)
        _ = link.takeQuiet(sentBefore: 2000)
        let (before, failed, after) = link.split(at: 2)
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
}
