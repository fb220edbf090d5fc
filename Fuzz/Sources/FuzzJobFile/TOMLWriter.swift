/// Writes a table the reader returned back as TOML, every value inline, so the fuzzer can check
/// that what the reader reads it reads again the same (a value lost, changed or invented in
/// between would show as a different second text).
enum TOMLWriter {
    static func document(_ table: TOMLTable) -> String {
        table.entries.map { key($0.key) + " = " + value($0.value) + "\n" }.joined()
    }

    static func value(_ value: TOMLValue) -> String {
        switch value {
        case .string(let string): quoted(string)
        case .integer(let integer): String(integer)
        case .float(let float) where float.isNaN: "nan"
        case .float(let float) where float.isInfinite: float < 0 ? "-inf" : "inf"
        case .float(let float): float.description
        case .boolean(let boolean): boolean ? "true" : "false"
        case .array(let items): "[" + items.map(Self.value).joined(separator: ", ") + "]"
        case .table(let table): "{" + table.entries.map { key($0.key) + " = " + Self.value($0.value) }.joined(separator: ", ") + "}"
        }
    }

    static func key(_ key: String) -> String { quoted(key) }

    static func quoted(_ string: String) -> String {
        var text = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: text += "\\u" + TOMLByte.hex(scalar.value, digits: 4)
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }
}
