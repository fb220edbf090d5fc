#if canImport(Glibc)
import Glibc
#endif

/// What a prescan learned: the data row count (for progress and ETA) and the header.
public struct PrescanResult: Sendable, Equatable {
    /// Data rows, header excluded.
    public let rows: Int
    /// The header row.
    public let header: CSVHeader
    /// The hashes of duplicate keys the Bloom filter saw more than once (`DuplicateTokensScan`),
    /// when a scan was asked for and could finish.
    var duplicateSuspects: [UInt64]?
}

/// What the prescan needs to look for duplicate tokens as it counts.
struct DuplicateScanRequest {
    /// `--topic`: the key's topic for a row with an empty one.
    var defaultTopic: String?
    /// The Bloom filter's size at most, freed when the prescan ends.
    var bloomBytes: Int

    /// The filter for an input of `inputBytes`: 20 bits for each row it may hold (a row is at least
    /// a 64-digit token and a line break), at least 1 MiB, at most `bloomBytes`. A smaller filter
    /// stays in cache better, and its pages cost less to fault in: on a machine long up, faulting in
    /// a 24 MiB filter's 2 MiB pages took ~27 ms of the 1M-row benchmark's prescan.
    func bloomBytes(inputBytes: Int) -> Int {
        min(bloomBytes, max(1 << 20, inputBytes / 64 * 20 / 8))
    }
}

/// One streaming pass over the campaign, so what is wrong with the file itself stops the run before
/// anything is sent, and the row count gives progress an ETA.
///
/// The pass counts records with `CSVRecordCounter` (no field is copied) and reads the header with
/// the same libcsv parser as CSVSource. Should the counter see anything strict libcsv would refuse,
/// or the file fail to read, the whole pass is made again with libcsv, which names the error and its
/// line exactly as the reader would.
///
/// With `requiresTopic` (token auth and no `--topic`) every row must fill the `topic` column, so
/// that a missing topic stops the run before anything is sent: that pass is libcsv's, field by field.
public enum Prescan {
    /// Reads the whole input once; throws what is wrong with the file itself, naming its line.
    public static func run(path: String, chunkSize: Int = 256 * 1024, requiresTopic: Bool = false) throws(InputFileError) -> PrescanResult {
        try run(path: path, chunkSize: chunkSize, requiresTopic: requiresTopic, duplicates: nil)
    }

    /// The same, also finding the duplicate keys' suspects when `duplicates` is given, and counting
    /// the credential groups' rows into `groups` (complete only when the scan finished). The scan
    /// rides on the counting pass; where libcsv must look instead (`requiresTopic`), the counting
    /// pass is made after it for the scan alone. The suspects are nil when no scan could finish.
    /// `halves`: when the counting pass is made by two threads (`PrescanHalves`).
    static func run(path: String, chunkSize: Int = 256 * 1024, requiresTopic: Bool = false,
                    duplicates: DuplicateScanRequest?, groups: GroupRowTally? = nil,
                    halves: PrescanHalves.Sizes = .standard,
                    names: CSVColumnNames = .deviceCampaign) throws(InputFileError) -> PrescanResult {
        // The header is read once, in small chunks: libcsv parsed the whole first 256 KiB chunk for
        // it, twice a run: callgrind, Prescan.run of a 30k-row campaign 63.1 M -> 44.4 M instructions.
        func scan(_ header: CSVHeader?, groups: GroupRowTally? = groups, sharing bloom: DuplicateBloom? = nil) -> DuplicateTokensScan? {
            guard duplicates != nil || groups != nil, let header else { return nil }
            let inputBytes = fileSize(path)
            return DuplicateTokensScan(header: header, defaultTopic: duplicates?.defaultTopic,
                                       bloomBytes: duplicates?.bloomBytes(inputBytes: inputBytes) ?? 64,
                                       hugePages: duplicates != nil && inputBytes >= hugePageInputBytes,
                                       findsDuplicates: duplicates != nil, groups: groups, sharing: bloom)
        }
        /// The suspects (nil when no duplicate scan was asked for); marks `groups` complete.
        func finish(_ scan: DuplicateTokensScan?) -> [UInt64]? {
            let suspects = scan?.finish()
            return duplicates == nil ? nil : suspects
        }
        if requiresTopic {
            var result = try parseAll(path: path, chunkSize: chunkSize, requiring: .topic, names: names)
            if let scan = scan(result.header), (try? countRecords(path: path, chunkSize: chunkSize, duplicates: scan)) != nil {
                result.duplicateSuspects = finish(scan)
            }
            return result
        }
        let knownHeader = try? readHeader(path: path, chunkSize: min(chunkSize, headerChunkSize), names: names)
        if let knownHeader, PrescanHalves.applies(path: path, sizes: halves) {
            // Each half counts its own groups, added to `groups` only when the halves agreed.
            let first = scan(knownHeader, groups: groups?.emptyCopy())
            let second = first.flatMap { scan(knownHeader, groups: groups?.emptyCopy(), sharing: $0.bloom) }
            let scans = first.flatMap { first in second.map { (first, $0) } }
            switch PrescanHalves.count(path: path, chunkSize: chunkSize, roundBytes: halves.roundBytes, scans: scans) {
            case .counted(let records)?:
                var result = PrescanResult(rows: max(0, records - 1), header: knownHeader)
                if let first, let second, let suspects = first.finish(), let others = second.finish() {
                    if let groups, let counted = first.groups, let more = second.groups {
                        groups.add(counted)
                        groups.add(more)
                        groups.isComplete = true
                    }
                    result.duplicateSuspects = duplicates == nil ? nil : DuplicateTokensScan.merge(suspects, others)
                }
                return result
            case .suspicious?:
                return try parseAll(path: path, chunkSize: chunkSize, names: names)
            case nil:
                break  // the one-thread pass below, with scans of its own
            }
        }
        let scan = scan(knownHeader)
        if let records = try? countRecords(path: path, chunkSize: chunkSize, duplicates: scan) {
            // Not read above (an error in its chunk): read as before, to throw what libcsv says.
            let header: CSVHeader
            if let knownHeader { header = knownHeader } else { header = try readHeader(path: path, chunkSize: chunkSize, names: names) }
            var result = PrescanResult(rows: max(0, records - 1), header: header)
            result.duplicateSuspects = finish(scan)
            return result
        }
        return try parseAll(path: path, chunkSize: chunkSize, names: names)
    }

    /// An input this large (~100k rows) touches every 4 KiB page of the duplicate filter anyway: on
    /// 2 MiB pages it costs no more RSS, and its inserts no TLB misses.
    static let hugePageInputBytes = 32 << 20

    private static func fileSize(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    /// Bytes a read for the header alone takes at a time (a header is a line, a few hundred bytes).
    static let headerChunkSize = 16 * 1024

    /// Records (the header's included), or nil when libcsv should look.
    private static func countRecords(path: String, chunkSize: Int,
                                     duplicates: DuplicateTokensScan? = nil) throws(InputFileError) -> Int? {
        let file = try InputFile(path: path)
        var counter = CSVRecordCounter()
        counter.duplicates = duplicates
        let scanned = try file.scanToEnd(chunkSize: chunkSize) { chunk in
            counter.scan(chunk)
            return !counter.isSuspicious
        }
        guard scanned else { return nil }
        counter.finish()
        return counter.isSuspicious ? nil : counter.records
    }

    static func readHeader(path: String, chunkSize: Int,
                           names: CSVColumnNames = .deviceCampaign) throws(InputFileError) -> CSVHeader {
        let file = try InputFile(path: path)
        let parser = CSVParser(path: file.path, keepsFields: false, names: names)
        var chunk: [UInt8] = []
        chunk.reserveCapacity(chunkSize)
        while parser.header == nil, try file.read(into: &chunk, limit: chunkSize) {
            try parser.parse(chunk)
        }
        if parser.header == nil { try parser.finish() }
        guard let header = parser.header else {
            throw file.bytesRead == 0 ? .empty(path: file.path) : .noHeader(path: file.path)
        }
        return header
    }

    /// The libcsv pass: every error named with its line.
    static func parseAll(path: String, chunkSize: Int = 256 * 1024, requiring column: CSVColumn? = nil,
                         names: CSVColumnNames = .deviceCampaign) throws(InputFileError) -> PrescanResult {
        let file = try InputFile(path: path)
        let parser = CSVParser(path: file.path, keepsFields: false, names: names)
        parser.requiredColumn = column
        var chunk: [UInt8] = []
        chunk.reserveCapacity(chunkSize)
        func checkRequired() throws(InputFileError) {
            guard let column, let header = parser.header else { return }
            guard header.has(column) else { throw .noTopicColumn(path: file.path) }
            if let row = parser.firstRowMissingRequired { throw .emptyTopic(path: file.path, row: row) }
        }
        while try file.read(into: &chunk, limit: chunkSize) {
            try parser.parse(chunk)
            try checkRequired()
        }
        try parser.finish()
        guard let header = parser.header else {
            throw file.bytesRead == 0 ? .empty(path: file.path) : .noHeader(path: file.path)
        }
        try checkRequired()
        return PrescanResult(rows: parser.rowCount, header: header)
    }
}
