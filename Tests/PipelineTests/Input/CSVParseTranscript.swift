@testable import Pipeline

// Shared with the FuzzCSVFast fuzzer (a symlink there): no Testing in here.

/// Everything a `CSVParser` tells its callers about some bytes read in given chunks: the rows of
/// each chunk's batch (numbers, problems, every slot's field), the header, the error that ended
/// the parse, the row count, the line reached after each chunk and the prescan's required-column
/// finding. Two parsers that agree on this agree on everything the reader and the prescan see.
struct CSVParseTranscript: Equatable, CustomStringConvertible {
    struct Row: Equatable {
        var number: Int
        var problem: CSVRowProblem?
        var fields: [[UInt8]?]
    }

    var batches: [[Row]] = []
    var linesReached: [Int] = []
    var header: CSVHeader?
    var error: InputFileError?
    var rowCount = 0
    var firstRowMissingRequired: Int?
    /// Records the fast path split (not compared: libcsv alone splits none).
    var fastRecords = 0

    /// The parse of `text` cut at `cuts` (ascending offsets; two equal ones make an empty chunk),
    /// ended by `finish()` unless a chunk threw.
    init(_ text: [UInt8], cuts: [Int], fastPath: Bool, keepsFields: Bool = true, extraColumns: [String] = [],
         requiredColumn: CSVColumn? = nil) {
        let parser = CSVParser(path: "t.csv", keepsFields: keepsFields, extraColumns: extraColumns, fastPath: fastPath)
        parser.requiredColumn = requiredColumn
        let slots = CSVColumn.allCases.count + extraColumns.count
        func take() {
            let batch = parser.takeBatch()
            batches.append(batch.indices.map { index in
                Row(number: batch.number(at: index), problem: batch.problem(at: index),
                    fields: (0..<slots).map { batch.field(slot: $0, at: index).map(Array.init) })
            })
            linesReached.append(parser.lineReached)
        }
        do {
            for (start, end) in zip([0] + cuts, cuts + [text.count]) {
                try parser.parse(Array(text[start..<end]))
                take()
            }
            try parser.finish()
        } catch {
            self.error = error
        }
        take()
        header = parser.header
        rowCount = parser.rowCount
        firstRowMissingRequired = parser.firstRowMissingRequired
        fastRecords = parser.fastRecords
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.batches == rhs.batches && lhs.linesReached == rhs.linesReached && lhs.header == rhs.header
            && lhs.error == rhs.error && lhs.rowCount == rhs.rowCount
            && lhs.firstRowMissingRequired == rhs.firstRowMissingRequired
    }

    var description: String {
        let rows = batches.map { batch in
            batch.map { row in
                "\(row.number)\(row.problem.map { " (\($0))" } ?? ""): "
                    + row.fields.map { $0.map { String(decoding: $0, as: UTF8.self).debugDescription } ?? "-" }
                        .joined(separator: " ")
            }.joined(separator: "; ")
        }
        return "header \(header?.names.description ?? "none"), \(rowCount) rows, error \(error.map { "\($0)" } ?? "none"), "
            + "lines \(linesReached), missing required \(firstRowMissingRequired.map(String.init) ?? "none"), batches \(rows)"
    }

    /// Where both parsers differ, for a failure message: the input, the cuts and both transcripts.
    static func difference(_ text: [UInt8], cuts: [Int], fast: Self, libcsv: Self) -> String {
        let shown = String(decoding: text.prefix(600), as: UTF8.self).debugDescription + (text.count > 600 ? "..." : "")
        return "input \(shown) (\(text.count) bytes) cut at \(cuts)\n"
            + "fast path: \(fast)\nlibcsv:    \(libcsv)"
    }
}
