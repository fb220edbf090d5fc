import Foundation
import Testing
import TestSupport
@testable import apns_bulk

/// `send --config JOB.toml` turns the job file into `send`'s own arguments: in the file's order,
/// arrays as repeated flags, `[mock]` as mock options, and the command line's flags winning.
@Suite struct JobFileExpansionTests {
    func expand(_ toml: String, _ arguments: [String] = []) throws -> [String] {
        let directory = try TemporaryDirectory()
        let path = try directory.write("job.toml", toml)
        return try JobFile.expand(["send", "--config", path] + arguments)
    }

    @Test func keysBecomeFlagsInTheFilesOrderAndTheCommandLineWins() throws {
        let expanded = try expand("""
            topic = "com.example.app"
            endpoint = ["mock", "api.push.apple.com:2197"]
            connections = 8
            response_timeout = 12.5
            no-prescan = true
            resume = false
            [mock]
            fail = ["500:0.01", "503:0.02"]
            latency_ms = 3
            throttle-after-errors = true
            """, ["--connections", "2"])
        #expect(expanded.dropLast(4) == [
            "send", "--topic=com.example.app", "--endpoint=mock", "--endpoint=api.push.apple.com:2197",
            "--response-timeout=12.5", "--no-prescan",
            "--mock-option=fail=500:0.01", "--mock-option=fail=503:0.02", "--mock-option=latency-ms=3",
            "--mock-option", "throttle-after-errors",
        ])
        #expect(Array(expanded.suffix(4)) == ["--config", expanded[expanded.count - 3], "--connections", "2"])
    }

    @Test func aMistakeInTheFileNamesTheFileAndTheLine() throws {
        #expect {
            try expand("topic = \"x\"\nwhen = 2026-11-25\n")
        } throws: { error in
            let message = (error as? RunFailure)?.message ?? ""
            return message.hasPrefix("--config /") && message.hasSuffix(".toml: line 2: dates are not used in a job file")
        }
    }

    @Test func anArrayOfTablesOtherThanKeysIsReadAndRefusedWhereNoFlagTakesIt() throws {
        #expect {
            try expand("[[endpoints]]\nhost = \"example.com\"\n")
        } throws: { error in
            (error as? RunFailure)?.message.contains(".toml, line 1: unknown key `endpoints`; did you mean `endpoint`?") == true
        }
    }

    @Test func keysTablesBecomeAKeysFileNamingTheJobFileUnlessTheCommandLineGivesKeys() throws {
        let toml = "topic = \"com.example.app\"\n[[keys]]\nfile = \"AuthKey_ABCDE12345.p8\"\n"
        let expanded = try expand(toml)
        let path = expanded[expanded.count - 1]
        #expect(expanded == ["send", "--topic=com.example.app", "--keys-file=\(path)", "--config", path])
        for flag in ["--key-file", "--keys-file"] {
            let given = try expand(toml, [flag, "other.p8"])
            #expect(!given.contains { $0.hasPrefix("--keys-file=") }, "\(flag) on the command line wins")
        }
    }

    @Test func aTypoIsRefusedWithTheFileTheLineAndTheNearestKey() throws {
        #expect {
            try expand("topic = \"x\"\n\nconection = 8\n")
        } throws: { error in
            let message = (error as? RunFailure)?.message ?? ""
            return message.hasPrefix("--config /") && message.contains(".toml, line 3: unknown key `conection`; did you mean `connections`?")
        }
        #expect(JobFileValueKind.nearestKey(to: "zzzzzz") == nil, "nothing near: no guess")
    }

    @Test func aValueOfTheWrongTypeIsRefusedEvenWhenTheCommandLineGivesTheFlag() throws {
        #expect {
            try expand("connections = \"eight\"\n", ["--connections", "2"])
        } throws: { error in
            (error as? RunFailure)?.message.hasSuffix(".toml, line 1: `connections` is a string (\"eight\"); it must be an integer") == true
        }
    }

    /// send's flags that broadcast shares live in option groups (RetryFlags, ConnectionFlags,
    /// OutputFlags, MetricsFlags): a job file still gives each of them.
    @Test func aJobFileGivesEachFlagSendSharesWithBroadcast() throws {
        let expanded = try expand("""
            max_attempts = 3
            retry-base-ms = 100
            retry-max-ms = 900
            max-streams = 50
            ca-file = "ca.pem"
            proxy = "http://127.0.0.1:3128"
            out = "runs/nightly"
            progress = "never"
            resume = true
            dry-run = true
            metrics-out = "m.prom"
            pushgateway = "http://127.0.0.1:9091"
            metrics-job = "nightly"
            metrics-instance = "host-1"
            metrics-interval = 2.5
            endpoint = ["mock"]
            [mock]
            latency_ms = 3
            """, ["--input", "campaign.csv"])
        let command = try SendCommand.parse(Array(expanded.dropFirst()))
        #expect(command.retry.maxAttempts == 3 && command.retry.retryBaseMs == 100 && command.retry.retryMaxMs == 900)
        #expect(command.connection.maxStreams == 50 && command.connection.caFile == "ca.pem")
        #expect(command.connection.proxy == "http://127.0.0.1:3128")
        #expect(command.connection.mockOptions == ["latency-ms=3"])
        #expect(command.output.out == "runs/nightly" && command.output.progress == .never)
        #expect(command.output.resume && command.output.dryRun)
        #expect(command.metrics.metricsOut == "m.prom" && command.metrics.pushgateway == "http://127.0.0.1:9091")
        #expect(command.metrics.metricsJob == "nightly" && command.metrics.metricsInstance == "host-1")
        #expect(command.metrics.metricsInterval == 2.5)
    }

    /// `proxy = ""` is `--proxy ''` (connect directly), as the flag's help says: `--proxy=` would
    /// be read as a missing value.
    @Test func anEmptyStringInAJobFileIsTheFlagsEmptyValue() throws {
        let expanded = try expand("proxy = \"\"\nnoproxy = \"\"\n", ["--input", "campaign.csv"])
        let command = try SendCommand.parse(Array(expanded.dropFirst()))
        #expect(command.connection.proxy == "" && command.noproxy == "")
    }

    @Test func everyFlagOfSendIsAJobFileKey() {
        let help = SendCommand.helpMessage(columns: 10_000)
        var flags = Set<String>()
        var rest = Substring(help)
        while let range = rest.range(of: "--") {
            let name = rest[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "-" }
            if name.first?.isLetter == true { flags.insert(String(name)) }
            rest = rest[range.upperBound...]
        }
        flags.subtract(["help", "config", "version"])
        #expect(flags.count > 40)
        #expect(flags.subtracting(JobFileValueKind.byKey.keys).isEmpty, "send flags a job file cannot give")
    }
}
