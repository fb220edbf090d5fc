import Testing
import TestSupport
@testable import Pipeline

/// The CSV fast path (`CSVFastSplitter`) against libcsv, the reference: both parsers get the same
/// bytes in the same chunks and must tell the reader and the prescan exactly the same (rows,
/// fields, problems, numbers, header, the error and its line). The `FuzzCSVFast` fuzzer makes the
/// same check on inputs it evolves.
@Suite struct CSVFastPathTests {
    /// Compares both parsers on `text` cut at `cuts`, in the reader's mode (with a payload
    /// template's extra column) and the prescan's (a required topic); returns the fast path's
    /// record count in the reader's mode.
    @discardableResult
    func expectSame(_ text: [UInt8], cuts: [Int], sourceLocation: SourceLocation = #_sourceLocation) -> Int {
        let extra = ["x"]
        let fast = CSVParseTranscript(text, cuts: cuts, fastPath: true, extraColumns: extra)
        let libcsv = CSVParseTranscript(text, cuts: cuts, fastPath: false, extraColumns: extra)
        #expect(fast == libcsv, "\(CSVParseTranscript.difference(text, cuts: cuts, fast: fast, libcsv: libcsv))",
                sourceLocation: sourceLocation)
        let fastCount = CSVParseTranscript(text, cuts: cuts, fastPath: true, keepsFields: false, requiredColumn: .topic)
        let libcsvCount = CSVParseTranscript(text, cuts: cuts, fastPath: false, keepsFields: false, requiredColumn: .topic)
        #expect(fastCount == libcsvCount,
                "counting: \(CSVParseTranscript.difference(text, cuts: cuts, fast: fastCount, libcsv: libcsvCount))",
                sourceLocation: sourceLocation)
        return fast.fastRecords
    }

    static let header = "device_token,payload,topic,x\n"

    /// Hand-made edge cases: each after a header, and each also as the whole file.
    static let edgeCases: [String] = [
        "", "\n", "\r\n", "\r", "  \n\t\n", "a", "a\n", "a\r\n", "a\r", "a\rb\r", "a\n\n\nb\n", "a\r\n\r\nb",
        "a,b,c,d\n", "a,b\n", "a,b,c,d,e,f\n", ",,,\n", ",\n", " , , , \n", "  a  ,\tb\t, c d ,e\n",
        "a,b,c,d", "a,b,c,", "a,b,c,\"\"", "\"\",\"\",\"\",\"\"\n", "\"a\",\"b\"\n", "\"a\" ,\"b\"\t\n",
        "\"a\"  \r\n", "\"a\"  ", "\"a\" \"b\"\n", "\"a\"b\n", "\"a\"\"b\"\n", "\"\"\"\"\n", "\"\"\"\"\"\"\n",
        "\"a\"\"\"\n", "\"\"\"a\"\n", "\"a\nb\",c\n", "\"a\r\nb\",c\r\n", "\"a\n\n\nb\"\n", "\"open\n",
        "\"open", "\"", "a\"b\n", "a \"b\n", " \"a\"\n", "\t\"a\"\t,b\n", "a,\"b\",\"c\"\"d\"\"e\",f\n",
        "a\u{0}b\n", "\u{0}", "a,b\n\u{0}", "\"a\u{0}\"\n", "a\n\"b\u{0}",
        "{\"\"aps\"\":1}\n", "\"{\"\"aps\"\":{\"\"alert\"\":\"\"hi \"\"}}\",x\n",
        "é,\"ü\"\"ß\",🎉\n", "a\tb,c  d\n", "\u{FEFF}a\n", "a,,\n,b\n", "a\n \n  \nb", "\"a\",\n", "\"a\",",
        "abcdefghijklmnopqrstuvwxyz,abcdefghijklmnop\"qrs\n", "abcdefgh,\"abcdefgh\"\"abcdefg\"\"\"\n",
    ]

    /// Chunks of one byte end one at every offset; the other sizes put two ends in one record.
    static let chunkSizes = [1, 2, 3, 5, 7, 8, 9, 13, 21, Int.max]

    func expectSameInEveryChunkSize(_ text: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        for chunk in Self.chunkSizes {
            expectSame(text, cuts: Array(stride(from: chunk, to: text.count, by: chunk)), sourceLocation: sourceLocation)
        }
    }

    @Test func edgeCasesGiveLibcsvsRowsFieldsAndErrorsWhereverChunksEnd() {
        for edge in Self.edgeCases {
            for prefix in ["", Self.header, "\u{FEFF}" + Self.header, "device_token\r\n", "\"device_token\" ,payload\n"] {
                expectSameInEveryChunkSize(Array((prefix + edge).utf8))
            }
        }
    }

    /// More fields than the splitter first has room for, several of them unescaped in one record.
    /// The splitter copies a quoted field a block at a time and unescapes each `""` as it goes: a run
    /// of 1 to 5 quotes at each offset of the field (every byte of a block and across blocks), before
    /// text or the field's end, gives libcsv's fields and errors.
    @Test func quoteRunsAtEveryAlignmentAreLibcsvs() {
        for run in 1...5 {
            for offset in 0..<36 {
                for tail in ["abcdefghijklmnopq\",b,c,d\n", "\",b,c,d\n", "\"\n"] {
                    let text = Array((Self.header + "t1,\"" + String(repeating: "p", count: offset)
                        + String(repeating: "\"", count: run) + tail + "t2,y,z,w\n").utf8)
                    expectSame(text, cuts: [])
                }
            }
        }
    }

    @Test func recordsOfManyFieldsAreLibcsvs() {
        var random = SeededRandom(seed: 40)
        let plain = Array(repeating: "f", count: 40).joined(separator: ",") + "\n"
        let quoted = (0..<40).map { "\"q\($0)\"\"\($0)\"" }.joined(separator: " ,") + "\r\n"
        for record in [plain, quoted, plain + quoted + plain] {
            let text = Array((Self.header + record + "t,p,c,d\n").utf8)
            expectSame(text, cuts: [])
            for _ in 0..<20 { expectSame(text, cuts: randomCuts(text.count, &random)) }
        }
    }

    /// Header rows the reader refuses or repairs: the same verdict, whichever parser.
    @Test func headerErrorsAreLibcsvs() {
        for header in ["payload\n", "device_token,Device_Token\n", "device_token,\u{FF}\n", "\"device_token\n",
                       "device\"token\n", "device_token\u{0}\n", "  DEVICE_TOKEN , payload \n"] {
            expectSameInEveryChunkSize(Array((header + "a,b\nc,d\n").utf8))
        }
    }

    /// Fields at the 64 KiB limit, quoted or not, with `""` that bring a quoted one under it, and
    /// ends of chunks inside them.
    @Test func fieldsAroundTheSizeLimitAreLibcsvs() {
        let limit = CSVParser.maxFieldBytes
        var random = SeededRandom(seed: 64)
        for length in [limit - 1, limit, limit + 1] {
            let plain = String(repeating: "q", count: length)
            let escaped = String(repeating: "\"\"", count: 2) + String(repeating: "q", count: length - 2)
            for field in [plain, "\"\(plain)\"", "\"\(escaped)\"", " \(plain) "] {
                // In a column in use, in one past the header's end, and as a record of its own.
                for record in ["t,\(field),c,d\n", "t,p,c,d,\(field)\n", "\(field)\n"] {
                    let text = Array((Self.header + record + "t2,p,c,d\n").utf8)
                    expectSame(text, cuts: [])
                    expectSame(text, cuts: randomCuts(text.count, &random))
                }
            }
        }
    }

    /// The rows `apns-bulk gen` writes (hex tokens, quoted JSON payloads full of `""`) take the
    /// fast path, bar the one a chunk cuts off; otherwise the checks above would prove nothing.
    @Test func campaignRowsTakeTheFastPath() throws {
        var text = Array("device_token,payload,priority\n".utf8)
        for row in 0..<2000 {
            text += Array("\(String(repeating: "0123456789abcdef", count: 4)),\"{\"\"aps\"\":{\"\"alert\"\":\"\"Row \(row)\"\"}}\",10\n".utf8)
        }
        let chunk = 16 * 1024
        let cuts = Array(stride(from: chunk, to: text.count, by: chunk))
        let fastRecords = expectSame(text, cuts: cuts)
        #expect(fastRecords >= 2001 - cuts.count, "the fast path split \(fastRecords) of 2001 records")
    }

    // MARK: - Random texts

    func pick(_ choices: [UInt8], _ random: inout SeededRandom) -> UInt8 { choices[Int(random.next() % UInt64(choices.count))] }

    /// A few cuts anywhere; sometimes two at one offset (an empty chunk), sometimes a small chunk size.
    func randomCuts(_ length: Int, _ random: inout SeededRandom) -> [Int] {
        guard length > 0 else { return [] }
        if random.next() % 4 == 0 {
            let chunk = 1 + Int(random.next() % 16)
            return Array(stride(from: chunk, to: length, by: chunk))
        }
        return (0..<Int(random.next() % 7)).map { _ in Int(random.next() % UInt64(length)) }.sorted()
    }

    /// Bytes drawn from what matters to CSV: quotes, commas, CR, LF, NUL, spaces, tabs, a BOM's
    /// and other UTF-8 bytes, and letters.
    static let nasty: [UInt8] = Array("\"\",,\r\n\n  \t\"ab0é".utf8) + [0, 0xEF, 0xBB, 0xBF]

    func nastyText(_ random: inout SeededRandom) -> [UInt8] {
        var text = random.next() % 3 == 0 ? [] : Array(Self.header.utf8)
        for _ in 0..<Int(random.next() % 60) { text.append(pick(Self.nasty, &random)) }
        return text
    }

    /// Records of fields of every kind — unquoted with blanks around and inside, quoted with `""`,
    /// commas, CR and LF inside and blanks after, empty — with LF, CRLF or CR ends, blank lines and
    /// sometimes no last newline; then, in half the texts, a few bytes overwritten with nasty ones.
    func recordsText(_ random: inout SeededRandom, longField: Bool = false) -> [UInt8] {
        let plain = Array("0123456789abcdefXYZ{}:!#$%&'()*+-./é".utf8) + [0xF0, 0x9F, 0x8E, 0x89]
        let blanks: [UInt8] = [0x20, 0x09]
        var text = Array((random.next() % 8 == 0 ? "\u{FEFF}" : "").utf8) + Array(Self.header.utf8)
        let records = 1 + Int(random.next() % 6)
        let long = longField ? Int(random.next() % UInt64(records)) : -1
        for record in 0..<records {
            let fields = random.next() % 5 == 0 ? 1 + Int(random.next() % 6) : 4
            for field in 0..<fields {
                if field > 0 { text.append(0x2C) }
                let length = record == long && field == 1
                    ? CSVParser.maxFieldBytes - 3 + Int(random.next() % 7) : Int(random.next() % 24)
                switch random.next() % 4 {
                case 0:
                    break
                case 1:
                    text.append(0x22)
                    for _ in 0..<length {
                        switch random.next() % 8 {
                        case 0: text += [0x22, 0x22]
                        case 1: text.append(pick([0x2C, 0x0A, 0x0D, 0x20, 0x09], &random))
                        default: text.append(pick(plain, &random))
                        }
                    }
                    text.append(0x22)
                    if random.next() % 6 == 0 { for _ in 0..<(1 + random.next() % 3) { text.append(pick(blanks, &random)) } }
                default:
                    if random.next() % 6 == 0 { text.append(pick(blanks, &random)) }
                    for _ in 0..<length {
                        text.append(random.next() % 10 == 0 ? pick(blanks, &random) : pick(plain, &random))
                    }
                    if random.next() % 6 == 0 { text.append(pick(blanks, &random)) }
                }
            }
            switch random.next() % 8 {
            case 0: text += [0x0D, 0x0A]
            case 1: text.append(0x0D)
            case 2: text += [0x0A, 0x0A]
            case 3: text += [0x0A, 0x20, 0x09, 0x0A]
            default: text.append(0x0A)
            }
        }
        if random.next() % 6 == 0 { text.removeLast() }
        if random.next() % 2 == 0 {
            for _ in 0..<(1 + Int(random.next() % 3)) {
                text[Int(random.next() % UInt64(text.count))] = pick(Self.nasty, &random)
            }
        }
        return text
    }

    @Test func randomNastyTextsGiveLibcsvsResultsWhereverChunksEnd() {
        var random = SeededRandom(seed: 20261125)
        for _ in 0..<2000 {
            let text = nastyText(&random)
            expectSame(text, cuts: randomCuts(text.count, &random))
        }
    }

    @Test func randomRecordsGiveLibcsvsResultsWhereverChunksEnd() {
        var random = SeededRandom(seed: 20261126)
        var fastRecords = 0
        var records = 0
        var errors = 0
        for _ in 0..<3000 {
            let text = recordsText(&random)
            let cuts = randomCuts(text.count, &random)
            fastRecords += expectSame(text, cuts: cuts)
            let libcsv = CSVParseTranscript(text, cuts: cuts, fastPath: false)
            records += libcsv.rowCount + (libcsv.header == nil ? 0 : 1)
            if libcsv.error != nil { errors += 1 }
        }
        // Both kinds of text were made, and the fast path split a good share of the records (not
        // all: many end a chunk, or a text, or come after a refused one).
        #expect(errors > 300 && errors < 2700, "\(errors) of 3000 texts were refused")
        #expect(fastRecords > records / 3, "the fast path split \(fastRecords) of \(records) records")
    }

    @Test func randomRecordsWithFieldsNearTheSizeLimitGiveLibcsvsResults() {
        var random = SeededRandom(seed: 20261127)
        for _ in 0..<24 {
            let text = recordsText(&random, longField: true)
            expectSame(text, cuts: randomCuts(text.count, &random))
        }
    }
}
