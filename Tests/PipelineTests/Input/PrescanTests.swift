import Foundation
import Testing
import TestSupport
@testable import Pipeline

@Suite struct PrescanTests {
    func prescanError(_ path: String) -> InputFileError? {
        do {
            _ = try Prescan.run(path: path, chunkSize: 4096)
            return nil
        } catch {
            return error
        }
    }

    @Test func countsDataRowsOfPlainAndCompressedFiles() throws {
        let directory = try TemporaryDirectory()
        var text = "device_token,payload\n"
        for index in 1...2500 { text += "t\(index),\"{\"\"a\"\":\"\"x\ny\"\"}\"\n" }
        let path = try directory.write("c.csv", text)
        #expect(try Prescan.run(path: path, chunkSize: 4096).rows == 2500)
        #expect(try Prescan.run(path: try ZstdCLI.compress(path), chunkSize: 4096).rows == 2500)
    }

    @Test func headerOnlyFileHasZeroRows() throws {
        let directory = try TemporaryDirectory()
        let result = try Prescan.run(path: try directory.write("c.csv", "device_token,payload\n"))
        #expect(result.rows == 0)
        #expect(result.header.has(.payload))
    }

    @Test func missingFileIsNamed() throws {
        let directory = try TemporaryDirectory()
        let error = prescanError(directory.path("nope.csv"))
        #expect(error == .missing(path: directory.path("nope.csv")))
        #expect(error?.description.contains("nope.csv") == true)
    }

    @Test func emptyFileIsAnError() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv", "")
        #expect(prescanError(path) == .empty(path: path))
        #expect(prescanError(try directory.write("blank.csv", "\n\n")) == .noHeader(path: directory.path("blank.csv")))
    }

    @Test func headerWithoutDeviceTokenNamesWhatItFound() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv", "token,payload\nabc,{}\n")
        let error = try #require(prescanError(path))
        #expect(error == .missingDeviceTokenColumn(path: path, found: ["token", "payload"]))
        #expect(error.description.contains("device_token"))
        #expect(error.description.contains("\"token\""))
    }

    @Test func unclosedQuoteNamesTheLineWhereItOpened() throws {
        let directory = try TemporaryDirectory()
        var text = "device_token,payload\n"
        for index in 1...5 { text += "t\(index),\"{\"\"a\"\":\"\"multi\nline\"\"}\"\n" }
        text += "t6,\"{\"\"a\"\":1}\nt7,{}\nt8,{}\n"
        let path = try directory.write("c.csv", text)
        let error = try #require(prescanError(path))
        // Header line 1, five rows of two lines each: row 6 starts on line 12.
        #expect(error == .unclosedQuote(path: path, line: 12))
        #expect(error.description.contains("line 12"))
    }

    @Test func textAfterAClosingQuoteNamesItsLine() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv", "device_token,payload\nt1,{}\nt2,\"{}\"x\n")
        #expect(prescanError(path) == .malformedQuoting(path: path, line: 3))
    }

    @Test func truncatedZstdIsAnError() throws {
        let directory = try TemporaryDirectory()
        var text = "device_token\n"
        for index in 1...20_000 { text += "token-\(index)-\(index * 7919)\n" }
        let compressed = try directory.read((try ZstdCLI.compress(try directory.write("c.csv", text)) as NSString).lastPathComponent)
        let cut = try directory.write("cut.csv.zst", bytes: Array(compressed.prefix(compressed.count / 2)))
        guard case .truncatedZstd(let path, let frame, let cutBytes) = prescanError(cut) else {
            Issue.record("expected truncatedZstd")
            return
        }
        #expect(path == cut)
        #expect(frame == 1)
        #expect(cutBytes == compressed.count / 2)
    }

    @Test func corruptZstdIsAnError() throws {
        let directory = try TemporaryDirectory()
        var text = "device_token\n"
        for index in 1...2000 { text += "token-\(index)\n" }
        var compressed = try directory.read((try ZstdCLI.compress(try directory.write("c.csv", text)) as NSString).lastPathComponent)
        for index in 20..<min(60, compressed.count) { compressed[index] ^= 0xA5 }
        let path = try directory.write("bad.csv.zst", bytes: compressed)
        guard case .corruptZstd(let named, let detail) = prescanError(path) else {
            Issue.record("expected corruptZstd, got \(String(describing: prescanError(path)))")
            return
        }
        #expect(named == path)
        #expect(!detail.isEmpty)
    }

    @Test func binaryJunkIsRefused() throws {
        let directory = try TemporaryDirectory()
        var generator = SplitMix64(seed: 42)
        let junk = (0..<10_000).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let path = try directory.write("junk.csv", bytes: junk)
        let error = try #require(prescanError(path))
        #expect(error.description.contains(path))
    }

    @Test func gzipIsRecognised() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv.gz", bytes: [0x1F, 0x8B, 8, 0, 0, 0, 0, 0])
        #expect(prescanError(path) == .gzip(path: path))
    }
}

@Suite struct PrescanEdgeTests {
    @Test func aDuplicatedColumnIsAnError() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv", "device_token,payload,Device_Token\na,{},b\n")
        #expect(throws: InputFileError.duplicateColumn(path: path, name: "device_token")) {
            try Prescan.run(path: path)
        }
    }

    @Test func aZstdNameWithoutZstdDataIsCorrupt() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv.zst", "device_token\nabc\n")
        #expect(throws: InputFileError.corruptZstd(path: path, detail: "the file does not start with the zstd magic number")) {
            try Prescan.run(path: path)
        }
    }

    @Test func anUnclosedQuoteInAHugeFileStopsAtTheFieldLimitNotAtTheEnd() throws {
        let directory = try TemporaryDirectory()
        let row = "t,{}\n"
        let rows = String(repeating: row, count: (CSVParser.hardFieldLimit + 1_000_000) / row.utf8.count)
        let path = try directory.write("c.csv", "device_token,payload\nt1,{}\nt2,\"{\n" + rows)
        #expect(throws: InputFileError.fieldTooLong(path: path, line: 3, limit: CSVParser.hardFieldLimit)) {
            try Prescan.run(path: path)
        }
    }
}
