/// RFC 4180 output: a field is quoted when it holds a comma, quote, CR or LF (or edge spaces).
package enum CSVText {
    package static func appendField(_ value: String, to out: inout [UInt8]) {
        let utf8 = value.utf8
        let needsQuotes = utf8.contains { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }
            || utf8.first == 0x20 || utf8.last == 0x20
        guard needsQuotes else { out.append(contentsOf: utf8); return }
        out.append(0x22)
        for byte in utf8 {
            if byte == 0x22 { out.append(0x22) }
            out.append(byte)
        }
        out.append(0x22)
    }
}
