import Foundation
import Testing

/// Job files that crashed `send --config` (found by fuzzing the job-file reader): the TOML parser
/// TOMLKit bundles aborts on a header whose key starts with neither a bare-key character nor a
/// quote, and on a `}` where an array expects a value. They are usage errors now, and brackets
/// elsewhere are still values.
@Suite struct JobFileHeaderTests {
    @Test(arguments: [
        ("endpoint = \"mock\"\n[:441\"]\nconnections = 8\nmax-streamt\0= 5.true\n", 2),  // as the fuzzer found it
        ("[:x]\n", 1),
        ("progress = \"never\"\n[[[a]]]\n", 2),
        ("connections = 2\n\n[\n", 3),
        ("[mock]\ngoaway-after = 5\n[[ =\n", 3),
        ("endpoint = [ }\narr = [_!1], [\"a\"]]\n", 1),  // the fuzzer's second find
        ("connections = [\n  1,\n  }\n", 3),
    ])
    func aTableHeaderTheParserCannotStartIsAUsageErrorNotACrash(job: String, line: Int) throws {
        let scratch = try Scratch()
        let path = try scratch.write("job.toml", job)
        let result = try Binary.run(["send", "--config", path, "--input", scratch.path("x.csv")])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("\(path): line \(line): not TOML: a table header must start with a key"), "\(result.stderr)")
        #expect(!result.stderr.contains("Assertion"))
    }

    @Test func bracketsInStringsCommentsAndArraysAreNotTakenForHeaders() throws {
        let scratch = try Scratch()
        let path = try scratch.write("job.toml", """
            # [:a comment]
            topic = "[:x]"
            payload-file = '''
            [:not a header]
            '''
            endpoint = [
              "[:y]",
            ]
            [mock]
            latency-ms = 1

            """)
        let result = try Binary.run(["send", "--config", path, "--input", scratch.path("x.csv")])
        #expect(result.status == 1, "fails for the missing input or the odd values, not the headers")
        #expect(!result.stderr.contains("table header"), "\(result.stderr)")
        #expect(!result.stderr.contains("Assertion"))
    }
}
