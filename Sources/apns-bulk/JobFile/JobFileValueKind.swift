/// What each key of a job file must hold, checked before the file becomes flags: a TOML value
/// of another type would otherwise turn into a flag's text and be read as something else
/// (`endpoint = 12345` became the host `12345:443`, `connections = [1, 2]` ran with 2, and
/// `max-attempts = true` said "Missing value").
enum JobFileValueKind {
    case string
    /// A string or an integer (`priority = 10`, `expiration = 0`): header values APNs reads as text.
    case stringOrInteger
    case integer
    /// An integer or a float (seconds).
    case number
    case boolean
    /// A string or an array of strings: a repeatable flag.
    case strings

    /// send's flags by their long name: a key not listed is refused as unknown (a test checks that
    /// every flag of `send --help` is here).
    static let byKey: [String: JobFileValueKind] = [
        "input": .string, "payload-file": .string, "no-prescan": .boolean,
        "allow-duplicates": .boolean, "payload-template": .string,
        "topic": .string, "push-type": .string, "priority": .stringOrInteger, "expiration": .stringOrInteger,
        "collapse-id": .string,
        "key-file": .strings, "key-id": .string, "team-id": .string, "cert-file": .strings, "cert-key-file": .strings,
        "p12-file": .strings, "p12-password-env": .string,
        "keys-file": .string, "environment": .string, "environment-fallback": .boolean,
        "endpoint": .strings, "connections": .integer, "max-streams": .integer, "threads": .integer, "ca-file": .string,
        "max-attempts": .integer, "retry-base-ms": .integer, "retry-max-ms": .integer, "reconnect-base-ms": .integer,
        "reconnect-max-ms": .integer, "abort-after": .integer, "unreachable-timeout": .number,
        "response-timeout": .number, "ping-interval": .number,
        "out": .string, "progress": .string, "resume": .boolean, "no-resend-lost": .boolean,
        "mock-option": .strings,
        "rate": .number, "spread": .string, "dry-run": .boolean,
        "protocol": .string, "binary-quiet-ms": .integer, "binary-window": .integer,
        "metrics-out": .string, "metrics-interval": .number, "pushgateway": .string, "metrics-job": .string,
        "metrics-instance": .string,
        "proxy": .string, "noproxy": .string,
        "shard": .string,
    ]

    /// The known key closest to `key` by edit distance, when it is close enough to be a typo
    /// (`conection` → `connections`); nil otherwise.
    static func nearestKey(to key: String) -> String? {
        let typed = Array(key)
        let scored = byKey.keys.map { ($0, editDistance(typed, Array($0))) }
        guard let best = scored.min(by: { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }) else { return nil }
        return best.1 <= max(2, typed.count / 4) ? best.0 : nil
    }

    /// Levenshtein distance: insertions, deletions and substitutions.
    private static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// What the key wants, for a message: "an integer", "a string or an array of strings".
    var wanted: String {
        switch self {
        case .string: "a string"
        case .stringOrInteger: "a string or an integer"
        case .integer: "an integer"
        case .number: "a number"
        case .boolean: "a boolean (true or false)"
        case .strings: "a string or an array of strings"
        }
    }

    /// Nil when `value` fits; otherwise what is wrong with it, naming `key`, the type found and
    /// the type wanted.
    func problem(_ value: TOMLValue, key: String) -> String? {
        if self == .strings, let array = value.array {
            for (index, item) in array.enumerated() where item.string == nil {
                return "`\(key)` item \(index + 1) is \(Self.name(of: item)); each item must be a string"
            }
            return nil
        }
        let fits = switch value {
        case .string: self == .string || self == .stringOrInteger || self == .strings
        case .integer: self == .integer || self == .number || self == .stringOrInteger
        case .float: self == .number
        case .boolean: self == .boolean
        case .array, .table: false
        }
        return fits ? nil : "`\(key)` is \(Self.name(of: value)); it must be \(wanted)"
    }

    /// The TOML type of `value` with an article and the value itself where it is short.
    static func name(of value: TOMLValue) -> String {
        switch value {
        case .string(let string): "a string (\"\(string)\")"
        case .integer(let integer): "an integer (\(integer))"
        case .float(let float): "a float (\(float))"
        case .boolean(let boolean): "a boolean (\(boolean))"
        case .array: "an array"
        case .table: "a table"
        }
    }
}
