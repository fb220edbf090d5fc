import Testing
import TestSupport
@testable import Pipeline

/// The result line's numbers as `JSONLineBuffer` writes them, held to `String(_:)` for integers and
/// to the buffer's earlier digit-by-digit formatting for durations.
@Suite struct JSONLineBufferTests {
    private func written(_ body: (inout JSONLineBuffer) -> Void) -> String {
        var out: [UInt8] = []
        JSONLineBuffer.append(to: &out, capacity: JSONLineBuffer.millisecondsBytes, body)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func integerWritesWhatStringWritesAtEveryPowerOfTenAndTheEnds() {
        var values: [Int64] = [0, 1, -1, 9, -9, 99, 100, 101, Int64.max, Int64.min, Int64.max - 1, Int64.min + 1]
        var power: Int64 = 1
        for _ in 0...18 {
            values += [power - 1, power, power + 1, -(power - 1), -power, -(power + 1)]
            if power <= Int64.max / 10 { power *= 10 }
        }
        for value in values {
            #expect(written { $0.integer(value) } == String(value))
        }
    }

    @Test func integerWritesWhatStringWritesForRandomValuesOfEveryLength() {
        var random = SeededRandom(seed: 11)
        for _ in 0..<20_000 {
            let value = Int64(bitPattern: random.next()) >> (random.next() % 64)
            #expect(written { $0.integer(value) } == String(value))
        }
    }

    @Test func nearestInt64RoundsAsRoundedDoesAtHalvesTheirNeighboursAndEveryMagnitude() {
        var values: [Double] = [0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, 0.49999999999999994, -0.49999999999999994,
                                4503599627370495.5, 4503599627370496, 9007199254740994, -9007199254740994,
                                9.2233720368547748e18 / 2, 1e-300, -1e-300]
        for whole in stride(from: -1000.0, through: 1000.0, by: 1) {
            for half in [whole + 0.5, whole - 0.5] { values += [half, half.nextUp, half.nextDown] }
        }
        var random = SeededRandom(seed: 17)
        for _ in 0..<20_000 {
            let magnitude = Double(Int64(bitPattern: random.next()) >> (random.next() % 64))
            values.append(magnitude / Double(random.next() % 4096 + 1))
        }
        for value in values {
            #expect(value.nearestInt64 == Int64(value.rounded()), "\(value)")
        }
    }

    @Test func millisecondsWritesWhatTheDigitByDigitFormattingWrote() {
        var random = SeededRandom(seed: 13)
        var values: [Double] = [0, -0.0, 0.0004, 0.0005, -0.0005, 1, 5, 3.1, 0.25, 0.005, 0.05, 0.001, 999.9995,
                                -2.5, 1e12, -1e12, 123.456, 0.1 + 0.2, .infinity, -.infinity, .nan]
        for _ in 0..<20_000 {
            values.append(Double(Int64(bitPattern: random.next()) % 10_000_000_000) / Double(random.next() % 5000 + 1))
        }
        for value in values {
            #expect(written { $0.milliseconds(value) } == digitByDigitMilliseconds(value), "\(value)")
        }
    }
}

/// `JSONLineBuffer.milliseconds` as it was before it wrote its fraction in one go.
private func digitByDigitMilliseconds(_ value: Double) -> String {
    guard value.isFinite else { return "null" }
    let micros = Int64((value * 1000).rounded())
    var text = micros < 0 ? "-" : ""
    let magnitude = micros.magnitude
    text += String(magnitude / 1000) + "."
    var fraction = magnitude % 1000
    var width = 3
    while width > 1 && fraction % 10 == 0 { fraction /= 10; width -= 1 }
    var divisor: UInt64 = width == 3 ? 100 : width == 2 ? 10 : 1
    while divisor > 0 {
        text += String(fraction / divisor % 10)
        divisor /= 10
    }
    return text
}
