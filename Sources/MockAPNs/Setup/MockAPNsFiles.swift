import APNs
import Foundation

/// Reads the mock's input files and fault specs. Off the request path: Foundation is fine here.
/// Every error names the file (or flag), the line and the fix.
public enum MockAPNsFiles {
    /// `--unregistered-file`: lines `device_token[,timestamp_ms]`; a token without a timestamp
    /// gets `defaultTimestamp`. Blank lines and lines starting with `#` are skipped.
    public static func unregistered(path: String, defaultTimestamp: Int64) throws(MockAPNsError) -> [String: Int64] {
        var tokens: [String: Int64] = [:]
        for (number, line) in try lines(path, flag: "--unregistered-file") {
            let parts = line.split(separator: ",", omittingEmptySubsequences: false).map(trimmed)
            guard parts.count <= 2 else {
                throw .file(path: path, line: number, problem: "expected device_token[,timestamp_ms], found \(parts.count) fields")
            }
            let token = try deviceToken(parts[0], path: path, line: number)
            var timestamp = defaultTimestamp
            if parts.count == 2, !parts[1].isEmpty {
                guard let value = Int64(parts[1]), value >= 0 else {
                    throw .file(path: path, line: number, problem: "timestamp \"\(parts[1])\" is not milliseconds since 1970")
                }
                timestamp = value
            }
            tokens[token] = timestamp
        }
        return tokens
    }

    /// `--respond-file`: lines `device_token,status,reason[,times]`; the first field may be a Live
    /// Activity channel id (base64, kept as written) instead, for broadcasts to that channel.
    public static func scripted(path: String) throws(MockAPNsError) -> [String: MockAPNsConfiguration.ScriptedAnswer] {
        var answers: [String: MockAPNsConfiguration.ScriptedAnswer] = [:]
        for (number, line) in try lines(path, flag: "--respond-file") {
            let parts = line.split(separator: ",", omittingEmptySubsequences: false).map(trimmed)
            guard parts.count == 3 || parts.count == 4 else {
                throw .file(path: path, line: number, problem: "expected device_token,status,reason[,times], found \(parts.count) fields")
            }
            let token = try deviceTokenOrChannelID(parts[0], path: path, line: number)
            guard let status = Int(parts[1]), (200...599).contains(status) else {
                throw .file(path: path, line: number, problem: "status \"\(parts[1])\" is not an HTTP status (200-599)")
            }
            let wordBytes = parts[2].utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f && $0 != 0x22 && $0 != 0x5c }
            guard status == 200 || (!parts[2].isEmpty && wordBytes) else {
                throw .file(path: path, line: number, problem: "reason \"\(parts[2])\" must be one word such as BadDeviceToken")
            }
            var times: Int?
            if parts.count == 4 {
                guard let value = Int(parts[3]), value > 0 else {
                    throw .file(path: path, line: number, problem: "times \"\(parts[3])\" is not a positive count")
                }
                times = value
            }
            answers[token] = .init(status: status, reason: parts[2], times: times)
        }
        return answers
    }

    /// `--fail 500:0.01,503:0.005`.
    public static func failures(_ spec: String) throws(MockAPNsError) -> [MockAPNsFailureRate] {
        var result: [MockAPNsFailureRate] = []
        for item in spec.split(separator: ",") {
            let parts = item.split(separator: ":").map(trimmed)
            guard parts.count == 2, let status = Int(parts[0]), status == 500 || status == 503,
                  let rate = Double(parts[1]), rate >= 0, rate <= 1 else {
                throw .flag(name: "--fail", value: spec,
                            problem: "give STATUS:RATE pairs, STATUS 500 or 503 and RATE in 0...1, e.g. 500:0.01,503:0.005")
            }
            result.append(MockAPNsFailureRate(status: status, rate: rate))
        }
        if result.isEmpty { throw .flag(name: "--fail", value: spec, problem: "give at least one STATUS:RATE pair") }
        return result
    }

    private static func lines(_ path: String, flag: String) throws(MockAPNsError) -> [(Int, String)] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .flag(name: flag, value: path, problem: "cannot read the file (missing or unreadable)")
        }
        let text = String(decoding: data, as: UTF8.self)
        var result: [(Int, String)] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let content = trimmed(line)
            if content.isEmpty || content.hasPrefix("#") { continue }
            result.append((index + 1, content))
        }
        return result
    }

    private static func deviceToken(_ text: String, path: String, line: Int) throws(MockAPNsError) -> String {
        if let error = DeviceToken.check(hex: text) {
            throw .file(path: path, line: line, problem: error.description)
        }
        return text.lowercased()
    }

    private static func deviceTokenOrChannelID(_ text: String, path: String, line: Int) throws(MockAPNsError) -> String {
        if DeviceToken.check(hex: text) != nil, BroadcastRules.isWellFormedChannelID(text) { return text }
        return try deviceToken(text, path: path, line: line)
    }

    private static func trimmed(_ text: some StringProtocol) -> String {
        String(text).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Why the mock cannot start, with what to fix.
public enum MockAPNsError: Error, Sendable, CustomStringConvertible {
    case flag(name: String, value: String, problem: String)
    case file(path: String, line: Int, problem: String)
    case server(String)

    /// One line naming the flag or the file and line, and the problem.
    public var description: String {
        switch self {
        case let .flag(name, value, problem): "\(name) \(value): \(problem)"
        case let .file(path, line, problem): "\(path):\(line): \(problem)"
        case let .server(detail): "mock server: \(detail)"
        }
    }
}
