import ByteScan
@testable import APNs
import Testing

/// xorshift64*: a fixed seed gives the same documents on every run (LiveActivityScanTests use it too).
struct Xorshift: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }
}

/// Documents that reach every branch of the scanner: long and short strings (so the word-at-a-time
/// skip starts, stops and runs into the end of the buffer), escapes, every UTF-8 length, numbers,
/// literals, whitespace, nesting.
private let seeds: [[UInt8]] = [
    #"{"aps":{"alert":{"title":"Campaign 🎉","body":"Row 1 abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefg"}}}"#,
    #"{"aps":{"alert":{"title":"T\u00e9","body":"B \ud83d\ude00"},"badge":1},"n":[-0.5e-3,10,true,false,null],"s":"é€😀"}"#,
    #"{"a":[1,2,{"b":"c"}],"d":{},"e":[],"f":"\"\\\/\b\f\n\r\t","g":"0123456789abcdef\"0123456789abcdef\\x"}"#,
    #"{"reason":"Unregistered","timestamp":1700000000123}"#,
    " \t\r\n{ \"k\" :\t[ 0 , -0.0 , 1E+2 , 2e-10 , 123456789012345678901234567890 ] , \"v\" : { } }\n ",
    #"{"x":"ab€cdefghij😀klmnopq߿rstuvwx\u20acyz","y":"abcdefgh","z":"abcdefg","w":"abcdefghi"}"#,
].map { Array($0.utf8) }

/// The bytes most likely to change a verdict, besides random ones.
private let interesting: [UInt8] = Array(#"{}[],:"\ 0123456789-+.eEtrufalsnu/bfnrt"#.utf8)
    + [0x00, 0x09, 0x0A, 0x0D, 0x1F, 0x20, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2,
       0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF]

/// The validator (its native block tests, and the portable SWAR ones other machines use) against
/// the reference.
private func expectSameError(_ document: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
    let tuned = JSONValidator.validate(document)
    let reference = ReferenceJSONValidator.validate(document)
    #expect(tuned == reference, "\(document)", sourceLocation: sourceLocation)
    let portable = document.withUnsafeBufferPointer { JSONValidator.validate(buffer: $0, using: SWARBlocks.self) }
    #expect(portable == reference, "SWAR: \(document)", sourceLocation: sourceLocation)
}

@Suite struct JSONValidatorReferenceTests {
    @Test func everyByteValueAtEveryOffsetOfTheSeedsGivesTheReferenceError() {
        for seed in seeds {
            for at in seed.indices {
                for byte in UInt8.min...UInt8.max {
                    var replaced = seed
                    replaced[at] = byte
                    expectSameError(replaced)
                }
                var inserted = seed
                inserted.insert(interesting[at % interesting.count], at: at)
                expectSameError(inserted)
                var removed = seed
                removed.remove(at: at)
                expectSameError(removed)
            }
        }
    }

    @Test func everyTruncationGivesTheReferenceError() {
        for seed in seeds {
            for count in 0...seed.count {
                expectSameError(Array(seed.prefix(count)))
                expectSameError(Array(seed.suffix(count)))
            }
        }
    }

    @Test func randomMutationsGiveTheReferenceError() {
        var random = Xorshift(state: 0x5EED_0F_5CA7)
        var rejected = 0
        for round in 0..<60_000 {
            var document = seeds[round % seeds.count]
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let at = Int.random(in: 0...document.count, using: &random)
                let byte = Bool.random(using: &random)
                    ? interesting.randomElement(using: &random)!
                    : UInt8.random(in: 0...255, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0 where at < document.count: document[at] = byte
                case 1: document.insert(byte, at: at)
                case 2 where at < document.count: document.remove(at: at)
                default: document = Array(document.prefix(at))
                }
            }
            if JSONValidator.validate(document) != nil { rejected += 1 }
            expectSameError(document)
        }
        // Both verdicts are well represented, so agreement means something.
        #expect(rejected > 5_000 && rejected < 55_000)
    }

    @Test func randomBytesAndRandomPlainStringsGiveTheReferenceError() {
        var random = Xorshift(state: 0xB17E5)
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...40, using: &random)
            let body = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            expectSameError(body)
            expectSameError(Array(#"{"k":""#.utf8) + body + Array(#""}"#.utf8))
            let plain = (0..<count).map { _ in UInt8.random(in: 0x20...0x7E, using: &random) }
            expectSameError(Array(#"{"k":""#.utf8) + plain + Array(#""}"#.utf8))
            expectSameError(Array(#"{"k":""#.utf8) + plain)
        }
    }

    /// Strings are skipped a block (16 bytes) at a time: a string's end, an escape, a control byte
    /// or a UTF-8 sequence at each offset around one and two blocks, with the buffer ending right
    /// after the string, a little later, or cutting it short (a tail shorter than a block).
    @Test func stringStopsAroundBlockEdgesGiveTheReferenceError() {
        let stops: [[UInt8]] = [[0x22], Array(#"\n"#.utf8), Array(#"\u00e9"#.utf8), [0x0A], [0x1F], [0x7F],
                                Array("é".utf8), Array("😀".utf8), [0xC3], [0xFF], Array(#"\x"#.utf8)]
        for keyLength in [0, 7, 15, 16, 17] {
            let key = Array(String(repeating: "k", count: keyLength).utf8)
            for offset in 0..<36 {
                for stop in stops {
                    let text = Array(repeating: UInt8(ascii: "a"), count: offset) + stop + Array("bcd".utf8)
                    let document = Array(#"{""#.utf8) + key + Array(#"":""#.utf8) + text + Array(#""}"#.utf8)
                    expectSameError(document)
                    for cut in 1...min(20, document.count) { expectSameError(Array(document.dropLast(cut))) }
                    expectSameError(document + Array("  \n".utf8))
                }
            }
        }
    }

    @Test func nestingAroundTheDepthLimitGivesTheReferenceError() {
        for depth in [1, 2, 3, Limits.jsonDepth - 1, Limits.jsonDepth, Limits.jsonDepth + 1, 2 * Limits.jsonDepth] {
            let objects = "{" + String(repeating: #""a":{"#, count: depth - 1) + String(repeating: "}", count: depth)
            let arrays = #"{"a":"# + String(repeating: "[", count: depth - 1) + String(repeating: "]", count: depth - 1) + "}"
            let mixed = "{" + String(repeating: #""a":[{"#, count: (depth - 1) / 2)
                + String(repeating: "}]", count: (depth - 1) / 2) + "}"
            for document in [objects, arrays, mixed].map({ Array($0.utf8) }) {
                expectSameError(document)
                expectSameError(Array(document.dropLast()))
                expectSameError(document + [UInt8(ascii: "}")])
                expectSameError(document + [UInt8(ascii: "]")])
            }
        }
    }
}
