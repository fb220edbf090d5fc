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

    /// send's flags by their long name. A key not listed is left to the command line's parser,
    /// which names an unknown flag.
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
