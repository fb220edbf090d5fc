import Foundation
import Testing
import TestSupport

@Suite struct GenCommandTests {
    @Test func genWritesACampaignWithInvalidRowsAndUnregisteredTokens() throws {
        let directory = try TemporaryDirectory()
        let csv = directory.path("c.csv")
        let dead = directory.path("dead.txt")
        let result = try Binary.run(["gen", "--rows", "1000", "--out", csv, "--invalid-rate", "0.1",
                                     "--unregistered-rate", "0.2", "--unregistered-out", dead, "--seed", "9"])
        #expect(result.status == 0, "\(result.stderr)")

        // An independent reader (Python's csv and json) checks the file the way a user's script would.
        let check = """
            import csv, json, re, sys
            rows = list(csv.DictReader(open(sys.argv[1], newline='', encoding='utf-8')))
            def valid(r):
                if not re.fullmatch('[0-9a-f]{64}', r['device_token']): return False
                if r['priority'] not in ('', '5', '10'): return False
                try: p = json.loads(r['payload'])
                except ValueError: return False
                return isinstance(p, dict) and 'aps' in p and len(r['payload'].encode()) <= 4096
            tokens = [r['device_token'] for r in rows]
            dead = [l.split(',') for l in open(sys.argv[2]).read().splitlines()]
            good = {r['device_token'] for r in rows if valid(r)}
            assert all(re.fullmatch('[0-9a-f]{64}', t) and re.fullmatch('[0-9]{13}', ts) and t in good for t, ts in dead)
            sizes = sorted(len(r['payload'].encode()) for r in rows if valid(r))
            print(len(rows), len(rows) - len(good), len(dead), len(set(tokens)), sizes[len(sizes)//2])
            """
        let script = directory.path("check.py")
        try directory.write("check.py", check)
        let checked = try Command.tool("python3", [script, csv, dead])
        #expect(checked.status == 0)
        let numbers = checked.stdout.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        #expect(numbers.count == 5)
        guard numbers.count == 5 else { return }
        #expect(numbers[0] == 1000)
        #expect((50...150).contains(numbers[1]))
        #expect((120...240).contains(numbers[2]))
        #expect(numbers[3] >= 1000 - numbers[1])
        #expect((180...220).contains(numbers[4]))
        #expect(result.stdout.contains("wrote 1000 rows"))
        #expect(result.stdout.contains("\(numbers[1]) invalid, \(numbers[2]) unregistered"))
    }

    @Test func genIsDeterministicAndZstdOutputMatchesPlain() throws {
        let directory = try TemporaryDirectory()
        let plain = directory.path("a.csv")
        let compressed = directory.path("b.csv.zst")
        #expect(try Binary.run(["gen", "--rows", "3000", "--out", plain, "--invalid-rate", "0.05", "--seed", "4"]).status == 0)
        #expect(try Binary.run(["gen", "--rows", "3000", "--out", compressed, "--invalid-rate", "0.05", "--seed", "4"]).status == 0)
        let decoded = try ZstdCLI.decode(compressed)
        #expect(decoded.status == 0)
        #expect(decoded.stdout == String(decoding: try Data(contentsOf: URL(fileURLWithPath: plain)), as: UTF8.self))
    }

    @Test func genRefusesARateOutsideZeroToOne() throws {
        let result = try Binary.run(["gen", "--rows", "10", "--out", "/tmp/never.csv", "--invalid-rate", "1.5"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("--invalid-rate"))
    }
}
