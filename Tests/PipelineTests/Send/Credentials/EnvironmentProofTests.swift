import Testing
@testable import Pipeline

/// A credential group's BadDeviceToken records wait for its first 200 or 410 before they may
/// enter the cleanup list; without one they end `aborted` `WrongEnvironment`.
@Suite struct EnvironmentProofTests {
    private func badDeviceToken(row: Int) -> RowResult {
        RowResult(row: row, deviceToken: Array("\(row)".utf8)[...], outcome: .badToken, status: 400,
                  reason: "BadDeviceToken", attempts: 1)
    }

    @Test func badDeviceTokensBeforeTheProofAreHeldAndTheProofListsThem() {
        let proof = EnvironmentProof(window: 100)
        for row in 1...3 {
            guard case .held = proof.hold(badDeviceToken(row: row)) else { Issue.record("row \(row) not held"); return }
        }
        #expect(proof.heldRows == 3)
        let released = proof.prove()
        #expect(released.map(\.row) == [1, 2, 3])
        #expect(released.allSatisfy { $0.outcome == .badToken && $0.reason == "BadDeviceToken" })
        #expect(proof.heldRows == 0)
        #expect(proof.prove().isEmpty, "only the first proof releases anything")
        guard case .record(let later) = proof.hold(badDeviceToken(row: 4)) else { Issue.record("held after the proof"); return }
        #expect(later.outcome == .badToken)
    }

    @Test func aWindowOfBadDeviceTokensWithoutProofIsTheWrongEnvironmentVerdict() {
        let proof = EnvironmentProof(window: 100)
        for row in 1..<100 { _ = proof.hold(badDeviceToken(row: row)) }
        #expect(proof.heldRows == 99, "the held set never outgrows the window")
        guard case .verdict(let answers, let records) = proof.hold(badDeviceToken(row: 100)) else {
            Issue.record("no verdict at the window")
            return
        }
        #expect(answers == 100)
        #expect(records.count == 100)
        #expect(records.allSatisfy { $0.outcome == .aborted && $0.reason == "WrongEnvironment" && $0.status == 400 })
        #expect(proof.heldRows == 0)
        guard case .record(let after) = proof.hold(badDeviceToken(row: 101)) else { Issue.record("held after the verdict"); return }
        #expect(after.outcome == .aborted && after.reason == "WrongEnvironment")
    }

    @Test func rowsHeldAtTheEndOfTheRunAreNotListed() {
        let proof = EnvironmentProof(window: 100)
        for row in 1...5 { _ = proof.hold(badDeviceToken(row: row)) }
        let ended = proof.judgeAtEnd()
        #expect(ended.count == 5)
        #expect(ended.allSatisfy { !$0.outcome.isDeadToken && $0.reason == "WrongEnvironment" })
        #expect(proof.endedUnproven == 5)
        #expect(proof.heldRows == 0)
    }

    @Test func aProofAfterTheVerdictListsLaterBadDeviceTokensAgain() {
        let proof = EnvironmentProof(window: 2, stopsGroup: false)
        _ = proof.hold(badDeviceToken(row: 1))
        _ = proof.hold(badDeviceToken(row: 2))
        #expect(proof.prove().isEmpty)
        guard case .record(let later) = proof.hold(badDeviceToken(row: 3)) else { Issue.record("held after the proof"); return }
        #expect(later.outcome == .badToken)
    }

    /// A broadcast's ChannelNotRegistered is held the same way (a channel of the other environment
    /// is unknown), but only a 200 proves the environment: a channel has no 410.
    @Test func aBroadcastsChannelNotRegisteredWaitsForA200AndA410ProvesNothing() {
        let held = EnvironmentProof.Held.channelNotRegistered
        #expect(held.proves(status: 200) && !held.proves(status: 410) && !held.proves(status: 400))
        #expect(EnvironmentProof.Held.badDeviceToken.proves(status: 410))
        let proof = EnvironmentProof(window: 3, held: held)
        func notRegistered(_ row: Int) -> RowResult {
            RowResult(row: row, deviceToken: Array("c\(row)".utf8)[...], outcome: .failed, status: 400,
                      reason: "ChannelNotRegistered", attempts: 1)
        }
        guard case .held = proof.hold(notRegistered(1)) else { Issue.record("not held"); return }
        #expect(proof.prove().map { "\($0.row) \($0.outcome) \($0.reason ?? "")" } == ["1 failed ChannelNotRegistered"],
                "a 200 lists it as today")

        let unproven = EnvironmentProof(window: 3, held: held)
        _ = unproven.hold(notRegistered(1))
        _ = unproven.hold(notRegistered(2))
        guard case .verdict(let answers, let records) = unproven.hold(notRegistered(3)) else {
            Issue.record("no verdict at the window")
            return
        }
        #expect(answers == 3)
        #expect(records.allSatisfy { $0.outcome == .aborted && $0.reason == "WrongEnvironment" && $0.status == 400 })
    }
}
