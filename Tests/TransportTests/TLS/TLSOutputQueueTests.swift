import Testing
@testable import Transport

/// The TLS session's output queue: bytes come out once each, in the order they went in, however
/// appends, partial sends, growth and compaction interleave.
@Suite struct TLSOutputQueueTests {
    @Test func bytesLeaveOnceInOrderThroughGrowthPartialSendsAndCompaction() {
        let queue = TLSOutputQueue(capacity: 64)
        var expected: [UInt8] = []
        var sent: [UInt8] = []
        var next: UInt8 = 0
        func take(_ count: Int) {
            let taken = min(count, queue.pendingCount)
            sent.append(contentsOf: UnsafeBufferPointer(start: queue.unsent, count: taken))
            queue.sent(taken)
        }
        for round in 0..<400 {
            let chunk = (0..<(round % 7 == 0 ? 5_000 : 37 + round % 50)).map { _ in next &+= 1; return next }
            expected += chunk
            if round % 3 == 0 {
                queue.append { (out: inout [UInt8]) -> Void in
                    #expect(out.isEmpty, "a producer sees only its own bytes")
                    out += chunk
                }
            } else {
                chunk.withUnsafeBytes { queue.append($0.baseAddress!, count: $0.count) }
            }
            take(round % 5 == 0 ? 3_000 : 41)
            // A would-block: the sent prefix is dropped once it dominates.
            if round % 11 == 0 { queue.compact() }
        }
        take(Int.max)
        #expect(queue.pendingCount == 0 && queue.start == 0 && queue.end == 0)
        #expect(sent.count == expected.count)
        let inOrder = sent == expected
        #expect(inOrder)
    }
}
