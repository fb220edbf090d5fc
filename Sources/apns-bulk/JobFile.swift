import Foundation
import TOMLKit

/// `--config JOB.toml`: a job file whose keys are the long flag names of `send` (`max-streams = 500`,
/// `endpoint = ["production"]`, `progress = "never"`), and whose optional `[mock]` table configures
/// the embedded mock of `--endpoint mock` with the mock-server's flag names (faults included).
///
/// It is expanded into command-line arguments before parsing, so a job file can say exactly what
/// the command line can, and validation is the same. Flags given on the command line win: a key is
/// taken from the file only when its flag is absent from the command line.
enum JobFile {
    /// Returns `arguments` with the job file's settings inserted after the subcommand name.
    /// `arguments` excludes the program name. Without `--config`, returns them unchanged.
    static func expand(_ arguments: [String]) throws -> [String] {
        guard let first = arguments.first, first == "send",
              let path = configPath(in: arguments) else { return arguments }
        let table = try load(path)
        var given = Set<String>()
        for argument in arguments where argument.hasPrefix("--") {
            given.insert(String(argument.split(separator: "=", maxSplits: 1)[0]))
        }
        var generated: [String] = []
        for (rawKey, value) in table {
            let key = rawKey.replacingOccurrences(of: "_", with: "-")
            if key == "mock" {
                guard let mock = value.table else {
                    throw RunFailure.usage("\(path): `mock` must be a table ([mock]) of mock-server flags")
                }
                generated += try mockOptions(mock, path: path)
                continue
            }
            if value.table != nil {
                throw RunFailure.usage("\(path): unknown table [\(rawKey)]; a job file holds send's flags and an optional [mock] table")
            }
            if key == "config" { throw RunFailure.usage("\(path): a job file cannot name another --config") }
            let flag = "--" + key
            if given.contains(flag) { continue }
            if let problem = JobFileValueKind.byKey[key]?.problem(value, key: rawKey) {
                throw RunFailure.usage("--config \(path): \(problem)")
            }
            generated += try flagArguments(flag: flag, value: value, path: path, key: rawKey)
        }
        return [first] + generated + arguments.dropFirst()
    }

    private static func configPath(in arguments: [String]) -> String? {
        for (index, argument) in arguments.enumerated() {
            if argument == "--config", index + 1 < arguments.count { return arguments[index + 1] }
            if argument.hasPrefix("--config=") { return String(argument.dropFirst("--config=".count)) }
        }
        return nil
    }

    private static func load(_ path: String) throws -> [(String, TOMLValueConvertible)] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw RunFailure.usage("--config \(path): cannot read the job file (missing or unreadable); give the path of a TOML file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw RunFailure.usage("--config \(path): the job file is not UTF-8 text")
        }
        if let line = TOMLParserGuard.firstLineThatCrashesTheParser(in: Array(data)) {
            throw RunFailure.usage("--config \(path): line \(line): not TOML: a table header must start with a key ([name] or [\"quoted name\"]), and an array holds values, not a '}'")
        }
        do {
            let table = try TOMLTable(string: text)
            return table.keys.compactMap { key in table[key].map { (key, $0) } }
        } catch let error as TOMLParseError {
            throw RunFailure.usage("--config \(path): line \(error.source.begin.line): \(error.description)")
        }
    }

    private static func flagArguments(flag: String, value: TOMLValueConvertible, path: String, key: String) throws -> [String] {
        if let bool = value.bool { return bool ? [flag] : [] }
        if let array = value.array {
            return try array.flatMap { try flagArguments(flag: flag, value: $0, path: path, key: key) }
        }
        guard let text = scalarText(value) else {
            throw RunFailure.usage("\(path): `\(key)` must be a string, number, boolean or array of those")
        }
        // One argument, so a value that starts with '-' (`connections = -3`) is taken as the
        // flag's value and judged by it, not read as a missing value and another flag.
        return ["\(flag)=\(text)"]
    }

    private static func mockOptions(_ table: TOMLTable, path: String) throws -> [String] {
        var options: [String] = []
        for key in table.keys {
            guard let value = table[key] else { continue }
            let name = key.replacingOccurrences(of: "_", with: "-")
            let values: [TOMLValueConvertible] = value.array.map { Array($0) } ?? [value]
            for item in values {
                if let bool = item.bool {
                    if bool { options += ["--mock-option", name] }
                } else if let text = scalarText(item) {
                    options += ["--mock-option=\(name)=\(text)"]
                } else {
                    throw RunFailure.usage("\(path): [mock] `\(key)` must be a string, number, boolean or array of those")
                }
            }
        }
        return options
    }

    private static func scalarText(_ value: TOMLValueConvertible) -> String? {
        if let string = value.string { return string }
        if let int = value.int { return String(int) }
        if let double = value.double { return String(double) }
        return nil
    }
}
