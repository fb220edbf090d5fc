import Foundation
import Testing
import TestSupport
@testable import apns_bulk

/// `send` without `--out` claims `./apns-bulk-out/<UTC timestamp>` with mkdir(2): a run started in
/// the same second as another takes the next numbered name, never the other's campaign.
@Suite struct DefaultOutputDirectoryTests {
    @Test func runsStartedInTheSameSecondTakeNumberedNames() throws {
        let directory = try TemporaryDirectory()
        let base = directory.path("out")
        let second = Date(timeIntervalSince1970: 1_795_426_299)
        let claimed = try (0..<3).map { _ in try SendSetup.claimDefaultOutputDirectory(in: base, at: second) }
        #expect(claimed == ["20261123T093139Z", "20261123T093139Z-2", "20261123T093139Z-3"].map { base + "/" + $0 })
        #expect(claimed.allSatisfy { FileManager.default.fileExists(atPath: $0) })
    }
}
