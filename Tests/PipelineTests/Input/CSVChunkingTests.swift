import Foundation
import Testing
import TestSupport
@testable import Pipeline

/// However the file is cut into read chunks, CSVSource gives the same rows, fields and problems,
/// and an input error names the same line: checked on random campaigns written the way a
/// spreadsheet export writes them, at chunk sizes from one byte up.
@Suite struct CSVChunkingTests {
    static let chunkSizes = [1, 2, 3, 7, 64, 4096, 256 * 1024]

    /// One row as generated: the fields in header order (fewer or more than the header has, at
    /// times) and what CSVSource must report for it.
    struct ExpectedRow: Equatable {
        var number: Int
        var problem: CSVRowProblem?
        var fields: [CSVColumn: [UInt8]]
    }

    struct Campaign {
        var text: [UInt8] = []
        var rows: [ExpectedRow] = []
    }

    /// A header of known columns in random order with an unknown one among them, then rows of
    /// random fields: commas, quotes, LFs and CRLFs inside quoted fields, UTF-8, empty fields,
    /// short and long rows, a field over 64 KiB now and then, blank lines, LF or CRLF endings.
    func randomCampaign(_ random: inout SeededRandom) -> Campaign {
        func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
        var names = ["device_token", "payload", "customer", "topic", "apns_id"]
        for index in names.indices.reversed() { names.swapAt(index, below(index + 1)) }
        let columns = names.map { CSVColumn(headerName: $0) }
        let pieces: [[UInt8]] = ["a", "7f", ",", "\"", "\n", "\r\n", " ", "\t", "é", "🎉", "{\"\"}", "x y"].map { Array($0.utf8) }

        var campaign = Campaign()
        campaign.text = Array(names.joined(separator: ",").utf8) + Array("\n".utf8)
        for number in 1...(40 + below(60)) {
            while below(8) == 0 { campaign.text += below(2) == 0 ? [0x0A] : [0x0D, 0x0A] }
            let count = below(10) == 0 ? 1 + below(names.count + 2) : names.count
            var fields: [[UInt8]] = []
            for _ in 0..<count {
                var field: [UInt8] = []
                if below(300) == 0 {
                    field = Array(repeating: UInt8(ascii: "z"), count: CSVSource.maxFieldBytes + 1 + below(100))
                } else {
                    for _ in 0..<below(7) { field += pieces[below(pieces.count)] }
                }
                fields.append(field)
            }
            // A lone empty field would be a blank line, which is no row at all.
            let mustQuote = count == 1 && fields[0].isEmpty
            campaign.text += fields.enumerated().flatMap { index, field in
                (index > 0 ? [UInt8(ascii: ",")] : []) + encoded(field, quoteAnyway: mustQuote || below(4) == 0)
            }
            let last = number == 1 ? false : below(40) == 0
            if !last || below(2) == 0 { campaign.text += below(3) == 0 ? [0x0D, 0x0A] : [0x0A] }

            var expected = ExpectedRow(number: number, problem: nil, fields: [:])
            for (index, field) in fields.enumerated() {
                let column = index < columns.count ? columns[index] : nil
                if field.count > CSVSource.maxFieldBytes {
                    // Every field counts, the unknown column's and those past the header too.
                    if expected.problem == nil {
                        expected.problem = column.map { .fieldTooLarge(column: $0, bytes: field.count) }
                            ?? .unusedFieldTooLarge(field: index + 1, bytes: field.count)
                    }
                } else if let column {
                    expected.fields[column] = field
                }
            }
            if expected.problem == nil && count != names.count {
                expected.problem = .fieldCount(found: count, expected: names.count)
            }
            campaign.rows.append(expected)
            if last { break }
        }
        return campaign
    }

    /// RFC 4180 quoting where a field needs it (or at random); an unquoted field never starts or
    /// ends with a space, which the reader would trim.
    func encoded(_ field: [UInt8], quoteAnyway: Bool) -> [UInt8] {
        let special: Set<UInt8> = [0x2C, 0x22, 0x0A, 0x0D]
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        let edgeSpace = field.first.map(isSpace) == true || field.last.map(isSpace) == true
        guard quoteAnyway || edgeSpace || field.contains(where: special.contains) else { return field }
        return [0x22] + field.flatMap { $0 == 0x22 ? [0x22, 0x22] : [$0] } + [0x22]
    }

    func read(_ path: String, chunkSize: Int) throws -> [ExpectedRow] {
        let source = try CSVSource(path: path, chunkSize: chunkSize)
        var rows: [ExpectedRow] = []
        while let row = try source.next() {
            var fields: [CSVColumn: [UInt8]] = [:]
            for column in CSVColumn.allCases {
                if let field = row.field(column) { fields[column] = Array(field) }
            }
            rows.append(ExpectedRow(number: row.number, problem: row.problem, fields: fields))
        }
        return rows
    }

    @Test(arguments: 0..<12)
    func randomRowsReadBackTheSameAtEveryChunkSize(seed: Int) throws {
        var random = SeededRandom(seed: UInt64(seed) &* 0x2545_F491_4F6C_DD1D &+ 17)
        let campaign = randomCampaign(&random)
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv", bytes: campaign.text)
        for chunkSize in Self.chunkSizes {
            let rows = try read(path, chunkSize: chunkSize)
            #expect(rows.count == campaign.rows.count, "chunk size \(chunkSize)")
            for (got, expected) in zip(rows, campaign.rows) where got != expected {
                Issue.record("chunk size \(chunkSize), row \(expected.number): got \(got), expected \(expected)")
                break
            }
        }
    }

    /// The first input error reading the whole file, or nil.
    func readError(_ path: String, chunkSize: Int) -> InputFileError? {
        do {
            let source = try CSVSource(path: path, chunkSize: chunkSize)
            while try source.next() != nil {}
            return nil
        } catch {
            return error
        }
    }

    func prescanError(_ path: String, chunkSize: Int) -> InputFileError? {
        do {
            _ = try Prescan.parseAll(path: path, chunkSize: chunkSize)
            return nil
        } catch {
            return error
        }
    }

    /// The 1-based physical line of `offset`: LFs before it, those inside quoted fields included.
    func line(of offset: Int, in text: [UInt8]) -> Int {
        1 + text[..<offset].count { $0 == 0x0A }
    }

    /// Rows before the error carry LFs inside quoted fields, CRLFs and blank lines, so a line
    /// count that missed any of them would name the wrong line.
    static let lead = "device_token,payload\r\n\r\nt1,\"{\"\"a\"\":\"\"x\ny\"\"}\"\r\nt2,\"\n\n\"\n\nt3,plain\n"

    enum ErrorKind: Sendable { case malformedQuoting, unclosedQuote, binary }

    /// Each text with the bytes the error is about: the offending byte, or the opening quote.
    static let inputErrors: [(text: String, marker: String, kind: ErrorKind)] = [
        (lead + "t4,ab\"c\n", "\"c", .malformedQuoting),
        (lead + "t4,\"{}\"Q\nt5,{}\n", "Q", .malformedQuoting),
        (lead + "t4,\"multi\nline\"  \"oops\"\n", "\"oops", .malformedQuoting),
        (lead + "t4,{}\nt5,\"never\r\nclosed\n\nt6,{}\n", "\"never", .unclosedQuote),
        (lead + "t4,\"\"\"never closed", "\"\"\"never", .unclosedQuote),
        (lead + "t4,{}\n\u{0}t5\n", "\u{0}", .binary),
        (lead + "t4,\"{}\",zz\u{0}\n", "\u{0}", .binary),
        (lead + "t4,\"line\nbreak\u{0}\"\n", "\u{0}", .binary),
    ]

    @Test(arguments: 0..<inputErrors.count)
    func errorLinesAreTheSameAtEveryChunkSize(index: Int) throws {
        let (text, marker, kind) = Self.inputErrors[index]
        let bytes = Array(text.utf8)
        let markerBytes = Array(marker.utf8)
        let offset = try #require(bytes.indices.first { bytes[$0...].starts(with: markerBytes) })
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv", bytes: bytes)
        let line = line(of: offset, in: bytes)
        let expected: InputFileError = switch kind {
        case .malformedQuoting: .malformedQuoting(path: path, line: line)
        case .unclosedQuote: .unclosedQuote(path: path, line: line)
        case .binary: .binary(path: path, line: line)
        }
        for chunkSize in Self.chunkSizes {
            #expect(readError(path, chunkSize: chunkSize) == expected, "chunk size \(chunkSize)")
            #expect(prescanError(path, chunkSize: chunkSize) == expected, "chunk size \(chunkSize)")
        }
    }

    @Test func aFieldThatNeverEndsNamesTheLineItStartsOnAtEveryChunkSize() throws {
        let directory = try TemporaryDirectory()
        var text = Array((Self.lead + "t4,\"open\n").utf8)
        let start = text.count - 6
        text += Array(repeating: UInt8(ascii: "q"), count: CSVParser.hardFieldLimit + 10)
        let path = try directory.write("c.csv", bytes: text)
        let expected = InputFileError.fieldTooLong(path: path, line: line(of: start, in: text), limit: CSVParser.hardFieldLimit)
        for chunkSize in [4096, 256 * 1024, 1024 * 1024] {
            #expect(readError(path, chunkSize: chunkSize) == expected, "chunk size \(chunkSize)")
        }
    }
}

@Suite struct CSVLineCountTests {
    @Test func countsEveryLineFeedWhateverTheLengthAndAlignment() {
        var random = SeededRandom(seed: 42)
        for length in [0, 1, 15, 16, 63, 64, 65, 127, 128, 1000, 64 * 63, 64 * 63 + 1, 64 * 64 + 17, 100_000] {
            for density in [0, 1, 3, 64] {
                let bytes = (0..<length + 3).map { _ -> UInt8 in
                    density > 0 && random.next() % 64 < UInt64(density) ? 10 : UInt8(truncatingIfNeeded: random.next() | 1)
                }
                for start in 0..<3 {
                    let slice = bytes[start..<(start + length)]
                    let counted = slice.withUnsafeBytes { CSVParser.lines(in: $0) }
                    #expect(counted == slice.count { $0 == 10 }, "length \(length), density \(density), start \(start)")
                }
            }
        }
    }
}
