/// What a prescan learned: the data row count (for progress and ETA) and the header.
public struct PrescanResult: Sendable, Equatable {
    public let rows: Int
    public let header: CSVHeader
}

/// One streaming pass over the campaign with the same parser as CSVSource, keeping only counts,
/// so what is wrong with the file itself stops the run before anything is sent.
public enum Prescan {
    public static func run(path: String, chunkSize: Int = 256 * 1024) throws(InputFileError) -> PrescanResult {
        let file = try InputFile(path: path)
        let parser = CSVParser(path: path, keepsFields: false)
        var chunk: [UInt8] = []
        chunk.reserveCapacity(chunkSize)
        while try file.read(into: &chunk, limit: chunkSize) {
            try parser.parse(chunk)
        }
        try parser.finish()
        guard let header = parser.header else {
            throw file.bytesRead == 0 ? .empty(path: path) : .noHeader(path: path)
        }
        return PrescanResult(rows: parser.rowCount, header: header)
    }
}
