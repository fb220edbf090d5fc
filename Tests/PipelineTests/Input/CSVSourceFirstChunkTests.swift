import Testing
import TestSupport
@testable import Pipeline

/// Inputs the CSV fuzzer (Fuzz/Sources/FuzzCSV) found read differently depending on where a read
/// chunk ended: a bad line in the chunk that also completed the header made the reader refuse the
/// whole file, while the same line one chunk later handed out the rows before it. Without the
/// prescan (a stream), that decided between "nothing sent, exit 1" and "rows sent, stopped at the
/// line, exit 2" by the pipe's timing.
@Suite struct CSVSourceFirstChunkTests {
    static let token = String(repeating: "ab", count: 32)

    /// Every row of `path` read with `chunkSize`, then the error that ended reading (nil: the end).
    func read(_ path: String, chunkSize: Int) throws -> (numbers: [Int], tokens: [String], error: InputFileError?, stop: InputStop?) {
        let source = try CSVSource(path: path, chunkSize: chunkSize)
        var numbers: [Int] = []
        var tokens: [String] = []
        do {
            while let row = try source.next() {
                numbers.append(row.number)
                tokens.append(row.string(.deviceToken) ?? "")
            }
        } catch {
            return (numbers, tokens, error, source.stoppedAt)
        }
        return (numbers, tokens, nil, source.stoppedAt)
    }

    @Test func aBadLineInTheFirstChunkEndsReadingAfterTheRowsBeforeIt() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv", "device_token,payload\n\(Self.token),{}\n\(Self.token),{}\nab\0cd,{}\n\(Self.token),{}\n")
        let whole = try read(path, chunkSize: 256 * 1024)
        #expect(whole.numbers == [1, 2], "the rows before the bad line")
        #expect(whole.error == .binary(path: path, line: 4))
        #expect(whole.stop?.line == 4)
        #expect(whole.stop?.record(row: 3).reason == "InputError")
    }

    @Test func aBadLineRightAfterTheHeaderIsNamedAtItsLineWhateverTheChunk() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv", "device_token,payload\nzz\"x,{}\n\(Self.token),{}\n")
        for chunk in [1, 7, 256 * 1024] {
            let result = try read(path, chunkSize: chunk)
            #expect(result.numbers == [], "chunk \(chunk)")
            #expect(result.error == .malformedQuoting(path: path, line: 2), "chunk \(chunk)")
            #expect(result.stop?.line == 2, "chunk \(chunk)")
        }
    }

    /// The fuzzer's input as found (a BOM, a short row, a NUL inside a token, an unclosed quote).
    @Test func theFuzzersInputReadsTheSameInOneByteChunksAndInOneChunk() throws {
        var bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("device_token,payload,extra\nzz,{},1,2\n".utf8)
        bytes += Array(repeating: Array("ab".utf8), count: 19).flatMap { $0 } + [0x62, 0x61, 0x16, 0, 0, 0, 0, 0, 0, 0xF0]
        bytes += Array(repeating: Array("ba".utf8), count: 12).flatMap { $0 } + Array("b\n\"unclosed,{}\n".utf8)
        let directory = try TemporaryDirectory()
        let path = try directory.write("fuzz.csv", bytes: bytes)
        let small = try read(path, chunkSize: 1)
        let large = try read(path, chunkSize: 256 * 1024)
        #expect(small.numbers == large.numbers && small.tokens == large.tokens)
        #expect(small.error == large.error && small.stop == large.stop)
        #expect(large.numbers == [1], "the short row before the NUL's line")
        #expect(large.stop?.line == 3)
    }
}

/// What the first fix above got wrong, found by the fuzzer in its next run: what is wrong with the
/// header itself must still refuse the input, even when rows follow it in the same chunk.
@Suite struct CSVSourceHeaderErrorTests {
    @Test(arguments: [
        ("device_to\u{FFFD}ken,payload\nab,{}\ncd,{}\n", "no device_token column"),
        ("device_token,payload,payload\nab,{},{}\n", "payload"),
        ("device_token,pay\0load\nab,{}\n", "NUL"),
    ])
    func aBadHeaderRefusesTheInputWhateverTheChunk(text: String, message: String) throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv", text)
        for chunk in [3, 256 * 1024] {
            #expect(throws: InputFileError.self, "chunk \(chunk)") { _ = try CSVSource(path: path, chunkSize: chunk) }
            do {
                _ = try CSVSource(path: path, chunkSize: chunk)
            } catch {
                #expect(error.description.contains(message), "chunk \(chunk): \(error)")
            }
        }
    }
}
