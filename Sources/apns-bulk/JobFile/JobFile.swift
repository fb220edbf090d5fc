import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `--config JOB.toml`: a job file whose keys are the long flag names of `send` (`max-streams = 500`,
/// `endpoint = ["production"]`, `progress = "never"`), and whose optional `[mock]` table configures
/// the embedded mock of `--endpoint mock` with the mock-server's flag names (faults included).
///
/// It is expanded into command-line arguments before parsing, so a job file can say exactly what
/// the command line can, and validation is the same. Flags given on the command line win: a key is
/// taken from the file only when its flag is absent from the command line (its value is checked
/// all the same, so a mistake in the file shows the day it is made). An unknown key is refused with
/// the file, its line and the nearest known key. Its `[[keys]]` tables
/// become `--keys-file` naming the job file itself, read by `KeyList` (unless the command line
/// gives `--key-file` or `--keys-file`), so that they are read by the same code as the mock's.
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
        for entry in table.entries {
            let rawKey = entry.key, value = entry.value
            let key = rawKey.replacingOccurrences(of: "_", with: "-")
            let place = "--config \(path)" + (table.lines[rawKey].map { ", line \($0)" } ?? "")
            if key == "keys" {
                // Several signing keys: read again by send's setup, which names the entry at fault.
                if !given.contains("--key-file") && !given.contains("--keys-file") { generated.append("--keys-file=\(path)") }
                continue
            }
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
            guard let kind = JobFileValueKind.byKey[key] else {
                let nearest = JobFileValueKind.nearestKey(to: key).map { "; did you mean `\($0)`?" } ?? ""
                throw RunFailure.usage("\(place): unknown key `\(rawKey)`\(nearest) (a job file's keys are send's long flag names, "
                                       + "without the dashes; see apns-bulk send --help)")
            }
            if let problem = kind.problem(value, key: rawKey) { throw RunFailure.usage("\(place): \(problem)") }
            if given.contains(flag) { continue }
            generated += try flagArguments(flag: flag, value: value, path: path, key: rawKey)
        }
        let expanded = [first] + generated + arguments.dropFirst()
        if table["mock"] != nil { try checkMockTable(expanded, path: path) }
        return expanded
    }

    private static func configPath(in arguments: [String]) -> String? {
        for (index, argument) in arguments.enumerated() {
            if argument == "--config", index + 1 < arguments.count { return arguments[index + 1] }
            if argument.hasPrefix("--config=") { return String(argument.dropFirst("--config=".count)) }
        }
        return nil
    }

    /// The TOML file at `path`, read whole; `flag` (`--config`, `--keys-file`) names it in messages.
    static func load(_ path: String, flag: String = "--config") throws -> TOMLTable {
        let noun = flag == "--config" ? "the job file" : "the file"
        guard let bytes = contents(of: path) else {
            throw RunFailure.usage("\(flag) \(path): cannot read \(noun) (missing or unreadable); give the path of a TOML file")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw RunFailure.usage("\(flag) \(path): \(noun) is not UTF-8 text")
        }
        do {
            return try TOMLReader.read(text)
        } catch {
            throw RunFailure.usage("\(flag) \(path): \(error)")
        }
    }

    /// The file's bytes, read with read(2): Foundation's `FileManager.contents(atPath:)` leaks its
    /// 4 KiB read buffer on an empty file (found by FuzzJobFile's leak check).
    private static func contents(of path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            bytes += chunk[0..<count]
        }
    }

    private static func flagArguments(flag: String, value: TOMLValue, path: String, key: String) throws -> [String] {
        if let bool = value.boolean { return bool ? [flag] : [] }
        if let array = value.array {
            return try array.flatMap { try flagArguments(flag: flag, value: $0, path: path, key: key) }
        }
        guard let text = scalarText(value) else {
            throw RunFailure.usage("\(path): `\(key)` must be a string, number, boolean or array of those")
        }
        // One argument, so a value that starts with '-' (`connections = -3`) is taken as the
        // flag's value and judged by it, not read as a missing value and another flag. An empty
        // string (`proxy = ""`, connect directly) is two: the parser reads `--proxy=` as no value.
        return text.isEmpty ? [flag, ""] : ["\(flag)=\(text)"]
    }

    private static func mockOptions(_ table: TOMLTable, path: String) throws -> [String] {
        var options: [String] = []
        for entry in table.entries {
            let key = entry.key, value = entry.value
            let name = key.replacingOccurrences(of: "_", with: "-")
            for item in value.array ?? [value] {
                if let bool = item.boolean {
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

    private static func scalarText(_ value: TOMLValue) -> String? {
        switch value {
        case .string(let string): string
        case .integer(let integer): String(integer)
        case .float(let float): String(float)
        case .boolean, .array, .table: nil
        }
    }
}

extension JobFile {
    /// A job file's `[mock]` table configures the embedded mock: without `--endpoint mock` (in the
    /// file or on the command line, whichever wins) it would be ignored while the run goes to the
    /// endpoints given, Apple's production by default. `arguments` are the expanded ones.
    static func checkMockTable(_ arguments: [String], path: String) throws {
        var endpoints: [String] = []
        for (index, argument) in arguments.enumerated() {
            if argument == "--endpoint", index + 1 < arguments.count { endpoints.append(arguments[index + 1]) }
            if argument.hasPrefix("--endpoint=") { endpoints.append(String(argument.dropFirst("--endpoint=".count))) }
        }
        guard !endpoints.contains("mock") else { return }
        let named = endpoints.isEmpty ? "production (api.push.apple.com:443, the default)" : endpoints.joined(separator: ", ")
        throw RunFailure.usage("--config \(path): its [mock] table configures the embedded mock of --endpoint mock, but "
            + "this run's endpoints are \(named), where it would be ignored: add endpoint = [\"mock\"] to the file (or "
            + "--endpoint mock) to rehearse, or remove [mock]; nothing was sent")
    }
}
