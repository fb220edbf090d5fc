import Testing
import TestSupport
@testable import ByteScan

/// The 16-byte tests behind the scans, held to byte-at-a-time rules: both implementations
/// (`SSE2Blocks` where the machine has it, `SWARBlocks` everywhere) must name the same first byte
/// for every byte value at every position of a block, with any bytes after it.
@Suite struct ByteBlocksTests {
    /// Each test and the rule it stands for.
    static let rules: [(name: String, rule: @Sendable (UInt8) -> Bool)] = [
        ("equal quote", { $0 == 0x22 }),
        ("equal comma or LF", { $0 == 0x2C || $0 == 0x0A }),
        ("at most comma", { $0 <= 0x2C }),
        ("plain text stop", { $0 < 0x20 || $0 >= 0x80 || $0 == 0x22 || $0 == 0x5C }),
        ("not a hex digit", { !"0123456789abcdefABCDEF".utf8.contains($0) }),
    ]

    /// The first byte of `block` flagged by rule `index`, in `Blocks`' test, or nil.
    static func first<Blocks: ByteBlocks>(_ block: [UInt8], rule index: Int, using _: Blocks.Type) -> Int? {
        block.withUnsafeBytes { raw -> Int? in
            let loaded = Blocks.load(raw.baseAddress!)
            let mask = switch index {
            case 0: Blocks.equal(loaded, 0x22)
            case 1: Blocks.equal(loaded, 0x2C, or: 0x0A)
            case 2: Blocks.atMost(loaded, 0x2C)
            case 3: Blocks.plainTextStops(loaded)
            default: Blocks.nonHexDigits(loaded)
            }
            return Blocks.isEmpty(mask) ? nil : Blocks.first(mask)
        }
    }

    /// Every implementation's verdict on `block` under every rule, against the rule itself.
    func expectFirstsFollowTheRules(_ block: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        for (index, rule) in Self.rules.enumerated() {
            let expected = block.firstIndex(where: rule.rule)
            let portable = Self.first(block, rule: index, using: SWARBlocks.self)
            #expect(portable == expected, "SWAR, \(rule.name): \(block)", sourceLocation: sourceLocation)
            #if arch(x86_64)
            let sse2 = Self.first(block, rule: index, using: SSE2Blocks.self)
            #expect(sse2 == expected, "SSE2, \(rule.name): \(block)", sourceLocation: sourceLocation)
            #endif
        }
    }

    /// A block none of the rules flags but the hex one for letters past f: digits and letters.
    static let quiet = Array("0123456789abcdef".utf8)

    @Test func everyByteValueAtEveryPositionIsFlaggedAsItsRuleSays() {
        for position in 0..<16 {
            for value in UInt8.min...UInt8.max {
                var block = Self.quiet
                block[position] = value
                expectFirstsFollowTheRules(block)
                // Behind a later stop of every kind, the first one still wins.
                if position < 15 {
                    for later: UInt8 in [0x00, 0x0A, 0x22, 0x2C, 0x5C, 0x80, 0xFF, 0x67] {
                        var two = block
                        two[15] = later
                        expectFirstsFollowTheRules(two)
                    }
                }
            }
        }
    }

    @Test func randomBlocksAreFlaggedAsTheirRulesSay() {
        var random = SeededRandom(seed: 16)
        let likely: [UInt8] = [0x00, 0x09, 0x0A, 0x0D, 0x1F, 0x20, 0x22, 0x2C, 0x2D, 0x2F, 0x30, 0x39, 0x3A, 0x40,
                               0x41, 0x46, 0x47, 0x5C, 0x60, 0x61, 0x66, 0x67, 0x7F, 0x80, 0xC1, 0xE6, 0xFF]
        for _ in 0..<20_000 {
            let block = (0..<16).map { _ in
                random.next() % 2 == 0 ? likely[Int(random.next() % UInt64(likely.count))]
                    : Self.quiet[Int(random.next() % 16)]
            }
            expectFirstsFollowTheRules(block)
        }
    }

    @Test func aStoredBlockIsTheLoadedBytesAtAnyAlignment() {
        let source = (0..<40).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        func roundTrip<Blocks: ByteBlocks>(_: Blocks.Type, from: Int, to: Int) -> [UInt8] {
            var target = [UInt8](repeating: 0, count: 40)
            source.withUnsafeBytes { raw in
                target.withUnsafeMutableBytes { Blocks.store(Blocks.load(raw.baseAddress! + from), to: $0.baseAddress! + to) }
            }
            return Array(target[to..<to + 16])
        }
        for from in 0..<17 {
            for to in [0, 1, 7, 8, 15, 17] {
                #expect(roundTrip(SWARBlocks.self, from: from, to: to) == Array(source[from..<from + 16]))
                #if arch(x86_64)
                #expect(roundTrip(SSE2Blocks.self, from: from, to: to) == Array(source[from..<from + 16]))
                #endif
            }
        }
    }
}
