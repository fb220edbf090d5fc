import Cleanup
import Testing

@Suite struct ScratchEntryTests {
    @Test func aHexTokenMatchesInEitherCase() {
        let entry = ScratchEntry(token: "00ab", reason: "Unregistered", unregisteredAt: nil)
        #expect(entry.variants(caseInsensitiveColumn: false) == ["00ab", "00AB"])
    }

    @Test func oneVariantIsEnoughWhereCaseCannotDiffer() {
        #expect(ScratchEntry(token: "0123", reason: "Unregistered", unregisteredAt: nil)
            .variants(caseInsensitiveColumn: false) == ["0123"])
        #expect(ScratchEntry(token: "00ab", reason: "Unregistered", unregisteredAt: nil)
            .variants(caseInsensitiveColumn: true) == ["00ab"])
    }
}
