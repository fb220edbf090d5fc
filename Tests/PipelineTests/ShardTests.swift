import Foundation
import Testing
@testable import Pipeline

/// `--shard K/N`: which rows a shard owns, the hash other tools must be able to reproduce, the
/// sharded prescan, and what a sharded resume counts.
@Suite struct ShardTests {
    private static func bytes(_ text: String) -> ArraySlice<UInt8> { Array(text.utf8)[...] }

    @Test func theShardKeyIsFNV1a64OfTheLowerCaseTokenWithoutSurroundingBlanks() {
        // FNV-1a 64 reference values (the FNV authors' test vectors).
        #expect(Shard.hash(token: Self.bytes("a")) == 0xaf63_dc4c_8601_ec8c)
        #expect(Shard.hash(token: Self.bytes("foobar")) == 0x8594_4171_f739_67e8)
        let lower = Shard.hash(token: Self.bytes("abcdef0123"))
        #expect(Shard.hash(token: Self.bytes("ABCdef0123")) == lower)
        #expect(Shard.hash(token: Self.bytes(" \tABCDEF0123 ")) == lower)
        #expect(Shard.hash(token: Self.bytes("abc def0123")) != lower, "blanks inside a token are part of it")
        #expect(Shard.hash(token: Self.bytes("")) == nil)
        #expect(Shard.hash(token: Self.bytes(" \t ")) == nil)
        // Only A-Z are lowered: bytes around them ('@', '[', UTF-8) are hashed as they are.
        #expect(Shard.hash(token: Self.bytes("@[")) != Shard.hash(token: Self.bytes("`{")))
    }

    /// docs/sending.md's recipe (Python, "Shards") gives every token the shard apns-bulk gives it.
    @Test func theReadmeRecipeInPythonAgreesWithTheShardOfEveryToken() throws {
        let tokens = (1...300).map { row -> String in
            let hex = String(UInt64(row) &* 0x9E37_79B9_7F4A_7C15, radix: 16)
            return row % 3 == 0 ? hex.uppercased() : row % 7 == 0 ? " " + hex + "\t" : hex
        }
        let script = """
            import sys
            def shard(token, n):
                h = 0xcbf29ce484222325
                for b in token.encode().strip(b" \\t").lower():
                    h = ((h ^ b) * 0x100000001b3) % 2**64
                return h % n
            for line in sys.stdin.read().split("\\n")[:-1]:
                print(shard(line, 7))
            """
        let input = try TemporaryDirectory()
        let path = try input.write("tokens.txt", tokens.joined(separator: "\n") + "\n")
        let result = try runTool(["sh", "-c", "python3 -c '\(script)' < \(path)"])
        #expect(result.status == 0, "\(result.stderr)")
        let theirs = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map { Int($0) }
        let ours = tokens.enumerated().map { Shard.of(token: Self.bytes($1), row: $0 + 1, count: 7) }
        #expect(theirs == ours)
    }

    @Test func aBadShardValueIsRefusedNamingTheFlagAndTheFix() throws {
        #expect(try Shard(parsing: "2/3") == Shard(index: 2, count: 3))
        #expect(try Shard(parsing: "0/1").description == "0/1")
        for text in ["3/3", "-1/3", "0/0", "1/-2", "a/b", "1", "", "1/2/3", " 1/3"] {
            #expect(performing: { try Shard(parsing: text) }, throws: { error in
                guard let error = error as? Shard.ParseError else { return false }
                return error.description.hasPrefix("--shard \(text): ")
            })
        }
        #expect(Shard(index: 3, count: 3) == nil)
    }

    /// Every row of a file, bad ones included, belongs to exactly one of N shards; copies of a
    /// token (in any case) to the same one; rows with no token to hash by row number.
    @Test func everyRowFallsInExactlyOneShardAndCopiesOfATokenTogether() throws {
        let directory = try TemporaryDirectory()
        var csv = "device_token,payload\n"
        var rows = 0
        func add(_ line: String) { csv += line + "\n"; rows += 1 }
        for row in 1...200 { add("\(String(row * 7919, radix: 16)),{}") }
        add("ABCDEF12,{}")          // 201: an upper-case copy of 202
        add("abcdef12,{}")          // 202
        add(",{}")                  // 203: no token
        add("abcdef12,{},extra")    // 204: wrong field count: placed by row number
        add("\"" + String(repeating: "a", count: 70_000) + "\",{}")  // 205: token over 64 KiB
        let path = try directory.write("c.csv", csv)
        for count in 1...5 {
            var owners = [Int: [Int]]()
            for index in 0..<count {
                let shard = try #require(Shard(index: index, count: count))
                let source = try CSVSource(path: path)
                while let batch = try source.nextBatch() {
                    for row in batch.indices where shard.owns(batch, at: row) { owners[batch.number(at: row), default: []].append(index) }
                }
            }
            #expect(owners.count == rows && owners.values.allSatisfy { $0.count == 1 }, "each row in one of \(count) shards")
            #expect(owners[201] == owners[202])
            for row in [203, 204, 205] { #expect(owners[row] == [row % count], "row \(row) of \(count) shards") }
        }
    }

    @Test func theShardedPrescanCountsAndMarksTheShardsRowsAsTheReaderSplitsThem() throws {
        let directory = try TemporaryDirectory()
        let csv = "device_token,topic\n" + (1...1000).map { "\(String($0 * 104_729, radix: 16)),com.example.app\n" }.joined()
        let path = try directory.write("c.csv", csv)
        var total = 0
        var union = Set<Int>()
        for index in 0..<3 {
            let shard = try #require(Shard(index: index, count: 3))
            let prescan = try ShardPrescan.run(path: path, shard: shard, chunkSize: 4096, requiresTopic: true)
            #expect(prescan.result.rows == prescan.members.count)
            #expect(prescan.result.rows > 250, "FNV-1a spreads 1000 tokens over 3 shards")
            total += prescan.result.rows
            for row in 1...1000 where prescan.members.contains(row) { #expect(union.insert(row).inserted) }
        }
        #expect(total == 1000 && union.count == 1000)

        let noTopic = try directory.write("t.csv", "device_token,topic\naa,x\nbb,\n")
        #expect(throws: InputFileError.emptyTopic(path: noTopic, row: 2)) {
            try ShardPrescan.run(path: noTopic, shard: Shard(index: 0, count: 2)!, requiresTopic: true)
        }
        let cut = try directory.write("q.csv", "device_token\naa\n\"bb\n")
        #expect(throws: InputFileError.self) { try ShardPrescan.run(path: cut, shard: Shard(index: 0, count: 2)!) }
    }

    @Test func aShardCountsOnlyItsOwnRowsAsUnrecorded() {
        var members = DoneRows(), done = DoneRows(), aborted = DoneRows()
        for row in stride(from: 3, through: 300, by: 3) { members.insert(row) }  // 100 rows
        for row in stride(from: 3, through: 150, by: 3) where row != 60 && row != 90 { done.insert(row) }
        aborted.insert(90)
        #expect(members.count(notIn: done, aborted, through: 150) == 1, "row 60; row 90 has its aborted record")
        #expect(members.count(notIn: done, aborted, through: 300) == 51)
        #expect(members.count(notIn: done, aborted, through: 64) == 1)
        #expect(members.count(notIn: done, aborted, through: 63) == 1)
        #expect(members.count(notIn: DoneRows(), DoneRows(), through: 127) == 42)
        #expect(members.count(notIn: done, aborted, through: 0) == 0)
    }

    /// The sharded prescan's fast path marks exactly the rows its libcsv pass marks (the reader's
    /// own parsing), over files with quoted fields, CRLF, blank lines, blanks around fields, wrong
    /// field counts and empty tokens; or it leaves the file to libcsv.
    @Test func theFastShardScanMarksTheRowsTheLibcsvPassMarks() throws {
        let directory = try TemporaryDirectory()
        var generator = SeededGenerator(seed: 14)
        var fastFiles = 0
        for file in 0..<40 {
            let newline = file % 3 == 0 ? "\r\n" : "\n"
            var text = file % 5 == 0 ? "payload , device_token,topic" + newline : "device_token,payload,topic" + newline
            let tokenFirst = file % 5 != 0
            for row in 0..<Int.random(in: 50...400, using: &generator) {
                let hex = String(UInt64.random(in: 0 ... .max, using: &generator), radix: 16)
                var token: String
                switch Int.random(in: 0..<12, using: &generator) {
                case 0: token = ""
                case 1: token = hex.uppercased()
                case 2: token = "  " + hex + " "
                case 3 where file % 4 == 0: token = "\"" + hex + "\""
                case 4 where file % 7 == 0: token = "\"a\"\"b\""
                case 5 where file % 6 == 0: token = hex.prefix(4) + " \t" + hex.dropFirst(4)
                default: token = hex
                }
                let payload = ["{}", "\"{\"\"a\"\":\"\"x,\ny\"\"}\"", " \"{}\" ", ""][Int.random(in: 0..<4, using: &generator)]
                var fields = tokenFirst ? [token, payload, "t"] : [payload, token, "t"]
                if row % 37 == 5 { fields.append("extra") }
                if row % 41 == 7 { fields.removeLast(2) }
                text += fields.joined(separator: ",") + newline
                if row % 29 == 3 { text += newline }
            }
            let path = try directory.write("c\(file).csv", text)
            for count in 1...4 {
                for index in 0..<count {
                    let shard = try #require(Shard(index: index, count: count))
                    let slow = try ShardPrescan.parse(path: path, shard: shard, chunkSize: 333)
                    guard let fast = try ShardPrescan.scan(path: path, shard: shard, chunkSize: 1000) else { continue }
                    if count == 1 { fastFiles += 1 }
                    #expect(fast.result == slow.result, "file \(file), shard \(shard)")
                    let highest = max(fast.members.highest, slow.members.highest)
                    #expect(fast.members.count(notIn: slow.members, DoneRows(), through: highest) == 0
                            && slow.members.count(notIn: fast.members, DoneRows(), through: highest) == 0, "file \(file), shard \(shard)")
                }
            }
        }
        #expect(fastFiles >= 24, "most files take the fast path (those with odd tokens do not)")
        let rows = String(repeating: "abcdef,{}\n", count: 20)
        let suspicious = try directory.write("q.csv", "device_token,payload\n" + rows + "ab\"c,{}\n")
        #expect(try ShardPrescan.scan(path: suspicious, shard: Shard(index: 0, count: 2)!, chunkSize: 64) == nil)
        #expect(throws: InputFileError.malformedQuoting(path: suspicious, line: 22), "libcsv's pass names the line") {
            try ShardPrescan.run(path: suspicious, shard: Shard(index: 0, count: 2)!, chunkSize: 64)
        }
        let huge = try directory.write("h.csv", "device_token,payload\nab,\"" + String(repeating: "x", count: 70_000) + "\"\n")
        #expect(try ShardPrescan.scan(path: huge, shard: Shard(index: 0, count: 2)!) == nil, "over 64 KiB: libcsv's")
    }
}

/// splitmix64: the same files on every run.
struct SeededGenerator: RandomNumberGenerator {
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
