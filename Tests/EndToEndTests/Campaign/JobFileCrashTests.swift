import Foundation
import Testing
import TestSupport

/// Job files that crashed `send --config` (found by fuzzing the job-file reader) when TOMLKit's
/// toml++ read them: a header whose key starts with neither a bare-key character nor a quote, a
/// `}` where an array expects a value, a date cut short. Through the binary they are usage errors
/// that name the file and the line, and brackets elsewhere are still values.
private let header = "not TOML: a table header must start with a key"
private let array = "not TOML: an array holds values separated by commas, found '}'"

@Suite struct JobFileCrashTests {
    @Test(arguments: [
        ("endpoint = \"mock\"\n[:441\"]\nconnections = 8\nmax-streamt\0= 5.true\n", 2, header),  // as the fuzzer found it
        ("[:x]\n", 1, header),
        ("progress = \"never\"\n[[[a]]]\n", 2, header),
        ("connections = 2\n\n[\n", 3, header),
        ("[mock]\ngoaway-after = 5\n[[ =\n", 3, header),
        ("endpoint = [ }\narr = [_!1], [\"a\"]]\n", 1, array),  // the fuzzer's second find
        ("connections = [\n  1,\n  }\n", 3, array),
        ("topic = \"x\"\nx = 1979-05-27Tz\n", 2, "dates are not used in a job file"),  // the third
    ])
    func whatCrashedTheOldParserIsAUsageErrorWithItsLine(job: String, line: Int, words: String) throws {
        let scratch = try TemporaryDirectory()
        let path = try scratch.write("job.toml", job)
        let result = try Binary.run(["send", "--config", path, "--input", scratch.path("x.csv")])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("--config \(path): line \(line): \(words)"), "\(result.stderr)")
        #expect(!result.stderr.contains("Assertion"))
    }

    @Test func bracketsInStringsCommentsAndArraysAreNotTakenForHeaders() throws {
        let scratch = try TemporaryDirectory()
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
