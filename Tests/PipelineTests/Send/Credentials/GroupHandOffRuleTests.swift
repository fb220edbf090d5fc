import Testing
@testable import Pipeline

/// When the reader of a several-key run reads on and when it waits for room (`GroupHandOff.hand`):
/// a stalled group's rows park while other groups may need the rows ahead; when every group with
/// rows ahead has rows parked (all queues full) it waits beyond a small floor, instead of parking
/// up to the budget.
@Suite struct GroupHandOffRuleTests {
    @Test func theReaderReadsOnForAGroupWithRowsAheadAndNoneParked() {
        // Group 0 stalled (rows parked), group 1 has rows ahead and an empty list: read on.
        #expect(GroupHandOff.mayNeedRowsAhead(unread: [5_000, 5_000], parked: [3_000, 0], hungry: [false, true]))
        #expect(GroupHandOff.readsOn(parked: 3_000, mayNeedRowsAhead: true))
        // Up to the budget, not beyond.
        #expect(!GroupHandOff.readsOn(parked: GroupHandOff.parkBudget + 1, mayNeedRowsAhead: true))
    }

    @Test func everyQueueFullMakesTheReaderWaitBeyondTheFloor() {
        // Both groups with rows ahead have rows parked: no group needs what is read next.
        #expect(!GroupHandOff.mayNeedRowsAhead(unread: [5_000, 5_000], parked: [1_500, 1_500], hungry: [true, true]))
        #expect(!GroupHandOff.readsOn(parked: 3_000, mayNeedRowsAhead: false))
        #expect(GroupHandOff.readsOn(parked: GroupHandOff.parkFloor, mayNeedRowsAhead: false))
        // A group whose rows have all been read needs none of the rows ahead, parked or not.
        #expect(!GroupHandOff.mayNeedRowsAhead(unread: [5_000, 0], parked: [3_000, 0], hungry: [false, true]))
    }

    @Test func aGroupWhoseQueueIsMoreThanHalfFullNeedsNoRowsAheadYet() {
        // Nothing parked for group 1, but its queue holds rows for a while: reading on would only
        // park group 0's rows (and the rows read far ahead go cold before they are sent).
        #expect(!GroupHandOff.mayNeedRowsAhead(unread: [5_000, 5_000], parked: [3_000, 0], hungry: [false, false]))
        #expect(GroupHandOff.mayNeedRowsAhead(unread: [5_000, 5_000], parked: [0, 0], hungry: [false, true]))
    }

    @Test func withoutThePrescansCountsAnyGroupMayNeedTheRowsAhead() {
        #expect(GroupHandOff.mayNeedRowsAhead(unread: nil, parked: [3_000, 0], hungry: [false, true]))
        #expect(!GroupHandOff.mayNeedRowsAhead(unread: nil, parked: [3_000, 3_000], hungry: [true, true]))
    }
}
