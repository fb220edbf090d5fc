import Testing
import TestSupport
@testable import Pipeline

/// `CSVStateMachine`, the one CSV record grammar the splitter, the record counter, the shard scanner
/// and the duplicate scan drive, read as libcsv (strict, the reference) reads each case: the same
/// records, the same fields byte for byte, the same refusals; whole, and cut into two chunks at
/// every offset. Each case is checked through the machine stepped on every byte, through the record
/// counter (its block skips) and through the reader's parser with its splitter.
@Suite struct CSVStateMachineTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let behaviour: String
        let text: String
        var testDescription: String { behaviour }
    }

    static let header = "device_token,payload,topic\n"

    static let cases: [Case] = [
        Case(behaviour: "a quoted LF stays inside its field", text: "t1,\"a\nb\",c\nt2,d,e\n"),
        Case(behaviour: "a quoted CR stays inside its field", text: "t1,\"a\rb\",c\nt2,d,e\n"),
        Case(behaviour: "a quoted CR LF stays inside its field", text: "t1,\"a\r\nb\",c\r\nt2,d,e\r\n"),
        Case(behaviour: "a doubled quote is one quote", text: "t1,\"{\"\"a\"\":\"\"b\"\"}\",c\n"),
        Case(behaviour: "a field of doubled quotes alone is quotes", text: "t1,\"\"\"\"\"\",\"\"\n"),
        Case(behaviour: "CR, LF and CR LF each end a record", text: "t1,a,b\rt2,c,d\nt3,e,f\r\nt4,g,h\n"),
        Case(behaviour: "a final record without a line break counts", text: "t1,a,b\nt2,c,d"),
        Case(behaviour: "a final quoted field without a line break counts", text: "t1,a,\"b\"\"\""),
        Case(behaviour: "a final empty field without a line break counts", text: "t1,a,"),
        Case(behaviour: "blank lines and lines of blanks are no records", text: "\n\r\n  \t\nt1,a,b\n\n \nt2,c,d\n\r"),
        Case(behaviour: "blanks around an unquoted field are dropped", text: " t1 ,\t a b \t, c\n"),
        Case(behaviour: "blanks after a closing quote are dropped", text: "\"t1\"  ,\"a\"\t, \"c\" \n"),
        Case(behaviour: "empty fields count", text: ",,\nt1,,\n,\"\",\n"),
        Case(behaviour: "wrong field counts are records", text: "t1\nt2,a,b,c,d\n"),
        Case(behaviour: "an unterminated quote is refused", text: "t1,a,b\nt2,\"open,c\nt3,d,e\n"),
        Case(behaviour: "an unterminated quote at the end is refused", text: "t1,a,\""),
        Case(behaviour: "a quote inside an unquoted field is refused", text: "t1,a\"b,c\n"),
        Case(behaviour: "text after a closing quote is refused", text: "t1,\"a\"b,c\n"),
        Case(behaviour: "a quote after a closing quote and blanks is refused", text: "t1,\"a\" \"b\",c\n"),
        Case(behaviour: "a NUL is refused", text: "t1,a\u{0}b,c\n"),
        Case(behaviour: "a BOM is part of the first field", text: "\u{FEFF}device_token,payload,topic\nt1,a,b\n"),
        Case(behaviour: "a BOM before a quoted field is refused", text: "\u{FEFF}\"device_token\",payload,topic\nt1,a,b\n"),
    ]

    /// The machine stepped on every byte of every field: each record's fields, rebuilt from its
    /// field bytes and escaped quotes.
    struct Fields: CSVStateMachine.Listener {
        var records: [[[UInt8]]] = []
        var record: [[UInt8]] = []
        var field: [UInt8] = []

        static var readsFieldBytes: Bool { true }
        mutating func fieldBegins(at index: Int, quoted: Bool) -> Bool { true }
        mutating func fieldByte(_ byte: UInt8) { field.append(byte) }
        mutating func escapedQuote() { field.append(0x22) }

        mutating func fieldEnds(_ kind: CSVStateMachine.FieldKind, at index: Int, length: Int, in base: UnsafePointer<UInt8>?) {
            if case .unquoted = kind {
                while let last = field.last, CSVStateMachine.isBlank(last) { field.removeLast() }
            }
            record.append(field)
            field = []
        }

        mutating func recordEnds() {
            records.append(record)
            record = []
        }
    }

    /// The machine's records, or nil when it refuses the text.
    static func machineRecords(_ text: [UInt8], cuts: [Int]) -> [[[UInt8]]]? {
        var stream = CSVStateMachine.Stream(openFieldLimit: CSVParser.hardFieldLimit)
        var fields = Fields()
        for (start, end) in zip([0] + cuts, cuts + [text.count]) {
            text[start..<end].withUnsafeBytes { stream.scan($0, &fields) }
        }
        stream.finish(&fields)
        return stream.isRefused ? nil : fields.records
    }

    /// libcsv's data records (the header's fields, then each row's), or nil when it refuses the text.
    static func libcsvRecords(_ text: [UInt8], cuts: [Int]) -> [[[UInt8]]]? {
        let libcsv = CSVParseTranscript(text, cuts: cuts, fastPath: false)
        guard libcsv.error == nil, let header = libcsv.header else { return nil }
        let rows = libcsv.batches.joined().map { row -> [[UInt8]]? in
            guard row.problem == nil else { return nil }
            return Array(row.fields.prefix(3)).map { $0 ?? [] }
        }
        return [header.names.map { Array($0.utf8) }] + rows.compactMap { $0 }
    }

    static func recordCount(_ text: [UInt8], cuts: [Int]) -> Int? {
        var counter = CSVRecordCounter()
        for (start, end) in zip([0] + cuts, cuts + [text.count]) {
            text[start..<end].withUnsafeBytes { counter.scan($0) }
        }
        counter.finish()
        return counter.isSuspicious ? nil : counter.records
    }

    /// Every way to cut the text in two, and not at all.
    static func cutsOfTwo(_ text: [UInt8]) -> [[Int]] {
        [[]] + (0...text.count).map { [$0] }
    }

    @Test(arguments: cases)
    func eachCaseIsReadAsLibcsvReadsItWhereverAChunkEnds(_ grammarCase: Case) {
        let text = Array(grammarCase.text.utf8)
        let withHeader = text.starts(with: [0xEF, 0xBB, 0xBF]) ? text : Array(Self.header.utf8) + text
        for cuts in Self.cutsOfTwo(withHeader) {
            let libcsv = CSVParseTranscript(withHeader, cuts: cuts, fastPath: false)
            let expected = Self.libcsvRecords(withHeader, cuts: cuts)
            let machine = Self.machineRecords(withHeader, cuts: cuts)
            #expect((machine == nil) == (expected == nil), "refused alike, cut at \(cuts)")
            if var machine, let expected {
                // libcsv's header names lose a BOM (`CSVParser` drops it): the machine keeps its bytes.
                if machine[0].first?.starts(with: [0xEF, 0xBB, 0xBF]) == true { machine[0][0].removeFirst(3) }
                let withAllFields = machine.enumerated().filter { $0.offset == 0 || $0.element.count == 3 }.map(\.element)
                #expect(withAllFields == expected, "cut at \(cuts)")
                #expect(machine.count - 1 == libcsv.rowCount, "cut at \(cuts)")
            }
            let counted = Self.recordCount(withHeader, cuts: cuts)
            #expect(counted.map { $0 - 1 } == (libcsv.error == nil ? libcsv.rowCount : nil), "the counter, cut at \(cuts)")
            let fast = CSVParseTranscript(withHeader, cuts: cuts, fastPath: true)
            #expect(fast == libcsv, "the splitter, cut at \(cuts)")
        }
    }

    /// A CR LF right after a field of every length from 0 to 70, quoted or not, or inside a quoted
    /// one: wherever the 16- and 32-byte steps of the skips and the splitter's copy put its two
    /// bytes (one on each side of a step's edge among them), the records are libcsv's.
    @Test func aCRLFAcrossABlockEdgeEndsOneRecordAsInLibcsv() {
        for length in 0...70 {
            let plain = String(repeating: "x", count: length)
            for record in ["t1,a,\(plain)\r\n", "t1,a,\"\(plain)\"\r\n", "t1,a,\"\(plain)\r\n\"\r\n", "t1,a,\"\(plain)\"\"\r\n\"\r\n"] {
                let text = Array((Self.header + record + "t2,b,c\r\n").utf8)
                let recordStart = Self.header.utf8.count
                for cuts in [[], [recordStart + 5 + length], [recordStart + 6 + length], [recordStart + 7 + length]] {
                    let expected = Self.libcsvRecords(text, cuts: cuts)
                    #expect(expected != nil)
                    #expect(Self.machineRecords(text, cuts: cuts) == expected, "\(record.debugDescription) cut at \(cuts)")
                    #expect(Self.recordCount(text, cuts: cuts) == expected.map(\.count), "\(record.debugDescription) cut at \(cuts)")
                    #expect(CSVParseTranscript(text, cuts: cuts, fastPath: true) == CSVParseTranscript(text, cuts: cuts, fastPath: false),
                            "\(record.debugDescription) cut at \(cuts)")
                }
            }
        }
    }

    /// A quote opened and never closed is refused only at the end of the input, as libcsv's
    /// `csv_fini` refuses it: until then it may close in a later chunk.
    @Test func anUnterminatedQuoteIsRefusedAtTheEndNotBefore() {
        let text = Array((Self.header + "t1,\"open,c\nt2,d,e\n").utf8)
        var stream = CSVStateMachine.Stream(openFieldLimit: CSVParser.hardFieldLimit)
        var fields = Fields()
        text.withUnsafeBytes { stream.scan($0, &fields) }
        #expect(!stream.isRefused && stream.machine.isInField)
        stream.finish(&fields)
        #expect(stream.isRefused)
        #expect(Self.libcsvRecords(text, cuts: []) == nil)
    }
}
