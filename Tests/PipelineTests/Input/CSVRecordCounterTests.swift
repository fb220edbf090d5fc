import Testing
import TestSupport
@testable import Pipeline

/// The prescan's fast path must delimit records exactly as libcsv does and must notice everything
/// libcsv refuses: checked against libcsv itself on many random texts.
@Suite struct CSVRecordCounterTests {
    func count(_ text: [UInt8], chunk: Int) -> (records: Int, suspicious: Bool) {
        count(text, cuts: Array(stride(from: chunk, to: text.count, by: chunk)))
    }

    /// The text scanned in chunks that end at `cuts` (ascending offsets).
    func count(_ text: [UInt8], cuts: [Int]) -> (records: Int, suspicious: Bool) {
        var counter = CSVRecordCounter()
        for chunk in chunks(text, cuts: cuts) {
            text[chunk].withUnsafeBytes { counter.scan($0) }
        }
        counter.finish()
        return (counter.records, counter.isSuspicious)
    }

    func chunks(_ text: [UInt8], cuts: [Int]) -> [Range<Int>] {
        zip([0] + cuts, cuts + [text.count]).map { $0..<$1 }
    }

    /// A few cuts anywhere, a word's middle included; sometimes two at one offset (an empty chunk).
    func randomCuts(_ length: Int, _ random: inout SeededRandom) -> [Int] {
        guard length > 0 else { return [] }
        return (0..<Int(random.next() % 6)).map { _ in Int(random.next() % UInt64(length)) }.sorted()
    }

    /// libcsv's data rows, or nil when it refuses the text.
    func libcsvRows(_ text: [UInt8], chunk: Int) -> Int? {
        libcsvRows(text, cuts: Array(stride(from: chunk, to: text.count, by: chunk)))
    }

    func libcsvRows(_ text: [UInt8], cuts: [Int]) -> Int? {
        let parser = CSVParser(path: "random.csv", keepsFields: false, fastPath: false)
        do {
            for chunk in chunks(text, cuts: cuts) {
                try parser.parse(Array(text[chunk]))
            }
            try parser.finish()
            return parser.rowCount
        } catch {
            return nil
        }
    }

    /// Campaign-like text: hex tokens, quoted JSON payloads full of `""`, some UTF-8, CRLF or LF;
    /// then, in most texts, a few bytes overwritten with ones that matter to CSV (or not).
    func campaignLikeText(_ random: inout SeededRandom) -> [UInt8] {
        func pick(_ choices: [UInt8]) -> UInt8 { choices[Int(random.next() % UInt64(choices.count))] }
        let hex = Array("0123456789abcdefABCDEF".utf8)
        let plain = Array("abcxyz {}:#!-09\\".utf8) + [0xF0, 0x9F, 0x8E, 0x89, 0xC3, 0xA9]
        var text = Array("device_token,payload,priority\n".utf8)
        for _ in 0..<(1 + Int(random.next() % 4)) {
            for _ in 0..<(Int(random.next() % 70)) { text.append(pick(hex)) }
            text.append(0x2C)
            if random.next() % 4 != 0 {
                text.append(0x22)
                for _ in 0..<(Int(random.next() % 12)) {
                    switch random.next() % 5 {
                    case 0: text += [0x22, 0x22]
                    case 1: text.append(pick([0x2C, 0x0A, 0x0D]))
                    default: for _ in 0..<(Int(random.next() % 20)) { text.append(pick(plain)) }
                    }
                }
                text.append(0x22)
            } else {
                for _ in 0..<(Int(random.next() % 20)) { text.append(pick(plain.filter { $0 != 0x20 })) }
            }
            text += random.next() % 2 == 0 ? Array(",10".utf8) : [0x2C]
            text += random.next() % 3 == 0 ? [0x0D, 0x0A] : [0x0A]
        }
        if random.next() % 8 == 0 { text.removeLast(Int(random.next() % UInt64(text.count - 29))) }
        for _ in 0..<(Int(random.next() % 4)) {
            let at = 29 + Int(random.next() % UInt64(text.count - 29))
            text[at] = pick([0x22, 0x22, 0x2C, 0x0A, 0x0D, 0x20, 0x09, 0x23, 0x61, 0x00])
        }
        return text
    }

    @Test func agreesWithLibcsvOnRandomTextsCutAnywhere() {
        var random = SeededRandom(seed: 20261123)
        let alphabet = Array("ab,\"\n\r \t".utf8) + [0x22, 0x2C, 0x0A]
        var refused = 0
        for _ in 0..<4000 {
            var text = Array("device_token\n".utf8)
            let length = Int(random.next() % 40)
            for _ in 0..<length { text.append(alphabet[Int(random.next() % UInt64(alphabet.count))]) }
            let cuts = randomCuts(text.count, &random)
            let fast = count(text, cuts: cuts)
            let exact = libcsvRows(text, cuts: cuts)
            if exact == nil { refused += 1 }
            #expect(fast.suspicious == (exact == nil), "\(String(decoding: text, as: UTF8.self).debugDescription) \(cuts)")
            if let exact, !fast.suspicious {
                #expect(fast.records - 1 == exact, "\(String(decoding: text, as: UTF8.self).debugDescription) \(cuts)")
            }
        }
        // Both kinds of text were generated.
        #expect(refused > 200 && refused < 3800)
    }

    @Test func agreesWithLibcsvOnCampaignLikeTextsCutAnywhere() {
        var random = SeededRandom(seed: 20260214)
        var refused = 0
        for _ in 0..<4000 {
            let text = campaignLikeText(&random)
            let cuts = randomCuts(text.count, &random)
            let fast = count(text, cuts: cuts)
            let exact = libcsvRows(text, cuts: cuts)
            if exact == nil { refused += 1 }
            #expect(fast.suspicious == (exact == nil), "\(text) \(cuts)")
            if let exact, !fast.suspicious {
                #expect(fast.records - 1 == exact, "\(text) \(cuts)")
            }
        }
        #expect(refused > 400 && refused < 3600)
    }

    /// Reading 8 bytes at a time must change nothing, wherever a chunk ends: after every chunk the
    /// count and the verdict are the byte-at-a-time counter's.
    @Test func agreesWithTheByteAtATimeCounterAfterEveryChunk() {
        var random = SeededRandom(seed: 20260301)
        for _ in 0..<20000 {
            let text = campaignLikeText(&random)
            let cuts = randomCuts(text.count, &random)
            var fast = CSVRecordCounter()
            var oracle = ByteAtATimeRecordCounter()
            for chunk in chunks(text, cuts: cuts) {
                text[chunk].withUnsafeBytes {
                    fast.scan($0)
                    oracle.scan($0)
                }
                #expect(fast.records == oracle.records && fast.isSuspicious == oracle.isSuspicious, "\(text) \(cuts)")
            }
            fast.finish()
            oracle.finish()
            #expect(fast.records == oracle.records && fast.isSuspicious == oracle.isSuspicious, "\(text) \(cuts)")
        }
    }

    @Test func quotedPayloadsWithNewlinesAndBlankLinesCountAsLibcsvDoes() {
        let text = Array("device_token,payload\r\n\r\nt1,\"{\"\"a\"\":\"\"x\ny\"\"}\"  \n\n  \nt2,{}\nt3,\"\"".utf8)
        let fast = count(text, chunk: 5)
        #expect(!fast.suspicious)
        #expect(fast.records == 4)
        #expect(libcsvRows(text, chunk: 5) == 3)
    }

    /// Quotes are paired a word, or two words, at a time: a run of 1 to 5 quotes at each offset of
    /// a quoted field (each byte of a 16-byte step, a run across the two words and across steps),
    /// followed by text or by the field's end, is counted and judged as libcsv does.
    @Test func quoteRunsAtEveryAlignmentAreJudgedAsLibcsvDoes() {
        var refused = 0
        for run in 1...5 {
            for offset in 0..<34 {
                for tail in ["abcdefghijklmnopqrstu\",x\n", "\",x\n", "\"\n"] {
                    let text = Array(("device_token,payload\nt1,\"" + String(repeating: "p", count: offset)
                        + String(repeating: "\"", count: run) + tail + "t2,y\n").utf8)
                    let fast = count(text, chunk: Int.max)
                    let exact = libcsvRows(text, chunk: Int.max)
                    if exact == nil { refused += 1 }
                    #expect(fast.suspicious == (exact == nil), "run \(run) at \(offset), tail \(tail.debugDescription)")
                    if let exact, !fast.suspicious {
                        #expect(fast.records - 1 == exact, "run \(run) at \(offset), tail \(tail.debugDescription)")
                    }
                }
            }
        }
        // Odd runs before text end the field and leave text after its closing quote: refused.
        #expect(refused > 0)
    }

    @Test func whatLibcsvRefusesIsSuspicious() {
        for bad in ["t1,a\"b\n", "t1,\"a\"b\n", "t1,\"open\n", "t1,\"a\" \"b\"\n", "t1,a\u{0}b\n"] {
            let text = Array(("device_token,payload\n" + bad).utf8)
            #expect(count(text, chunk: 3).suspicious, "\(bad.debugDescription)")
            #expect(libcsvRows(text, chunk: 3) == nil, "\(bad.debugDescription)")
        }
    }
}

