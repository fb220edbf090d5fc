import Testing
@testable import Pipeline

/// The prescan's fast path must delimit records exactly as libcsv does and must notice everything
/// libcsv refuses: checked against libcsv itself on many random texts.
@Suite struct CSVRecordCounterTests {
    func count(_ text: [UInt8], chunk: Int) -> (records: Int, suspicious: Bool) {
        var counter = CSVRecordCounter()
        var start = 0
        while start < text.count {
            let end = min(text.count, start + chunk)
            text[start..<end].withUnsafeBytes { counter.scan($0) }
            start = end
        }
        counter.finish()
        return (counter.records, counter.isSuspicious)
    }

    /// libcsv's data rows, or nil when it refuses the text.
    func libcsvRows(_ text: [UInt8], chunk: Int) -> Int? {
        let parser = CSVParser(path: "random.csv", keepsFields: false)
        do {
            var start = 0
            while start < text.count {
                let end = min(text.count, start + chunk)
                try parser.parse(Array(text[start..<end]))
                start = end
            }
            try parser.finish()
            return parser.rowCount
        } catch {
            return nil
        }
    }

    @Test func agreesWithLibcsvOnRandomTexts() {
        var random = SplitMix(seed: 20261123)
        let alphabet = Array("ab,\"\n\r \t".utf8) + [0x22, 0x2C, 0x0A]
        var refused = 0
        for _ in 0..<4000 {
            var text = Array("device_token\n".utf8)
            let length = Int(random.next() % 40)
            for _ in 0..<length { text.append(alphabet[Int(random.next() % UInt64(alphabet.count))]) }
            let chunk = 1 + Int(random.next() % 16)
            let fast = count(text, chunk: chunk)
            let exact = libcsvRows(text, chunk: chunk)
            if exact == nil { refused += 1 }
            #expect(fast.suspicious == (exact == nil), "\(String(decoding: text, as: UTF8.self).debugDescription)")
            if let exact, !fast.suspicious {
                #expect(fast.records - 1 == exact, "\(String(decoding: text, as: UTF8.self).debugDescription)")
            }
        }
        // Both kinds of text were generated.
        #expect(refused > 200 && refused < 3800)
    }

    @Test func quotedPayloadsWithNewlinesAndBlankLinesCountAsLibcsvDoes() {
        let text = Array("device_token,payload\r\n\r\nt1,\"{\"\"a\"\":\"\"x\ny\"\"}\"  \n\n  \nt2,{}\nt3,\"\"".utf8)
        let fast = count(text, chunk: 5)
        #expect(!fast.suspicious)
        #expect(fast.records == 4)
        #expect(libcsvRows(text, chunk: 5) == 3)
    }

    @Test func whatLibcsvRefusesIsSuspicious() {
        for bad in ["t1,a\"b\n", "t1,\"a\"b\n", "t1,\"open\n", "t1,\"a\" \"b\"\n", "t1,a\u{0}b\n"] {
            let text = Array(("device_token,payload\n" + bad).utf8)
            #expect(count(text, chunk: 3).suspicious, "\(bad.debugDescription)")
            #expect(libcsvRows(text, chunk: 3) == nil, "\(bad.debugDescription)")
        }
    }
}

struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
