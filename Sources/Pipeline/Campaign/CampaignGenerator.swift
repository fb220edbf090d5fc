import ZstdFile

/// Synthetic campaigns for demos and benchmarks: distinct tokens derived from a seed, a JSON
/// payload of about `payloadBytes`, a share of invalid rows (a mix of what RowDecoder rejects), and
/// a share of tokens the mock reports as unregistered (`device_token,timestamp_ms` lines).
public struct CampaignGenerator {
    /// What to generate (`apns-bulk gen`'s flags).
    public struct Options: Sendable {
        /// Data rows to write.
        public var rows: Int
        /// The share of rows made invalid, in 0...1 (a mix of defects the reader rejects).
        public var invalidRate: Double = 0
        /// The share of tokens listed as unregistered for the mock, in 0...1.
        public var unregisteredRate: Double = 0
        /// About how long each payload is.
        public var payloadBytes: Int = 200
        /// Makes the output repeatable: the same seed, the same file.
        public var seed: UInt64 = 1
        /// `rows` valid rows with 200-byte payloads.
        public init(rows: Int) { self.rows = rows }
    }

    /// What was written, for the command's summary and its tests.
    public struct Totals: Sendable, Equatable {
        /// Data rows written.
        public var rows = 0
        /// Of those, invalid ones.
        public var invalid = 0
        /// Tokens listed as unregistered.
        public var unregistered = 0
    }

    /// The kinds of invalid row, chosen in turn at random.
    enum Defect: Int, CaseIterable {
        case badHex, oddLength, emptyToken, payloadNotJSON, payloadNotObject, payloadTooLarge, badPriority
    }

    /// The header row every generated campaign starts with.
    public static let header = "device_token,payload,priority\n"
    /// Timestamps of unregistered tokens lie in the 30 days before 2026-01-01T00:00:00Z.
    static let unregisteredBase: Int64 = 1_767_225_600_000

    let options: Options
    private var random: SplitMix64

    /// A generator for `options`; nothing is written until asked.
    public init(options: Options) {
        self.options = options
        random = SplitMix64(seed: options.seed ^ 0x5EED_CAFE_F00D_D00D)
    }

    /// Writes the campaign to `path` (zstd-compressed when it ends in `.zst`) and, when given,
    /// the unregistered tokens to `unregisteredPath`.
    public mutating func write(to path: String, unregisteredPath: String?) throws -> Totals {
        let campaign = try GeneratorOutput(path: path)
        let unregistered = try unregisteredPath.map { try GeneratorOutput(path: $0) }
        var totals = Totals()
        var line: [UInt8] = []
        var deadLine: [UInt8] = []
        campaign.append(Array(Self.header.utf8))
        for row in 1...max(options.rows, 1) where options.rows > 0 {
            line.removeAll(keepingCapacity: true)
            let token = Self.token(row: row, seed: options.seed)
            if random.nextDouble() < options.invalidRate {
                let defect = Defect(rawValue: Int(random.next() % UInt64(Defect.allCases.count))) ?? .badHex
                appendDefectiveRow(defect, token: token, row: row, to: &line)
                totals.invalid += 1
            } else {
                line.append(contentsOf: token)
                line.append(UInt8(ascii: ","))
                appendPayload(row: row, bytes: options.payloadBytes, to: &line)
                line.append(contentsOf: ",\n".utf8)
                if let unregistered, random.nextDouble() < options.unregisteredRate {
                    deadLine.removeAll(keepingCapacity: true)
                    deadLine.append(contentsOf: token)
                    deadLine.append(UInt8(ascii: ","))
                    let offset = Int64(random.next() % (30 * 86_400_000))
                    JSONText.appendInteger(Self.unregisteredBase - offset, to: &deadLine)
                    deadLine.append(UInt8(ascii: "\n"))
                    try unregistered.add(deadLine)
                    totals.unregistered += 1
                }
            }
            try campaign.add(line)
            totals.rows += 1
        }
        try campaign.close()
        try unregistered?.close()
        return totals
    }

    private mutating func appendDefectiveRow(_ defect: Defect, token: [UInt8], row: Int, to line: inout [UInt8]) {
        switch defect {
        case .badHex: line.append(contentsOf: "zz".utf8); line.append(contentsOf: token.dropFirst(2))
        case .oddLength: line.append(contentsOf: token.dropLast())
        case .emptyToken: break
        default: line.append(contentsOf: token)
        }
        line.append(UInt8(ascii: ","))
        switch defect {
        case .payloadNotJSON: line.append(contentsOf: "\"not json {\"".utf8)
        case .payloadNotObject: line.append(contentsOf: "\"[1,2,3]\"".utf8)
        case .payloadTooLarge: appendPayload(row: row, bytes: 5000, to: &line)
        default: appendPayload(row: row, bytes: options.payloadBytes, to: &line)
        }
        line.append(contentsOf: (defect == .badPriority ? ",7\n" : ",\n").utf8)
    }

    /// A CSV-quoted JSON object of about `bytes` bytes (unquoted), with an `aps` alert.
    private func appendPayload(row: Int, bytes: Int, to line: inout [UInt8]) {
        let start = line.count
        line.append(contentsOf: #""{""aps"":{""alert"":{""title"":""Campaign 🎉"",""body"":""Row "#.utf8)
        JSONText.appendInteger(Int64(row), to: &line)
        line.append(UInt8(ascii: " "))
        // Doubled quotes count once in the JSON; 11 bytes of closing text follow.
        let quotes = line[start...].reduce(0) { $1 == 0x22 ? $0 + 1 : $0 }
        let jsonSoFar = line.count - start - 1 - (quotes - 1) / 2
        let padding = max(0, bytes - jsonSoFar - 8)
        for index in 0..<padding { line.append(UInt8(ascii: "a") + UInt8(index % 26)) }
        line.append(contentsOf: #"""}}}""#.utf8)
    }

    /// Distinct for distinct rows: the first 8 bytes are a bijection of the row number.
    static func token(row: Int, seed: UInt64) -> [UInt8] {
        let first = SplitMix64.mix(UInt64(row) &+ SplitMix64.mix(seed))
        var words = [first]
        for index in 1...3 { words.append(SplitMix64.mix(first ^ (UInt64(index) &* 0x9E37_79B9_7F4A_7C15))) }
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for word in words {
            for shift in stride(from: 60, through: 0, by: -4) { hex.append(digits[Int((word >> UInt64(shift)) & 0xF)]) }
        }
        return hex
    }
}

/// SplitMix64: small, fast, reproducible across platforms.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state &- 0x9E37_79B9_7F4A_7C15)
    }

    mutating func nextDouble() -> Double { Double(next() >> 11) * 0x1p-53 }
}

/// A plain file in big buffers, or a `.zst` as 4 MiB frames.
private final class GeneratorOutput {
    private var plain: BufferedOutput?
    private var zstd: ZstdFrameWriter?

    init(path: String) throws {
        if path.hasSuffix(".zst") { zstd = try ZstdFrameWriter(path: path) } else { plain = try BufferedOutput(path: path) }
    }

    func append(_ bytes: [UInt8]) { plain?.append(bytes); zstd?.append(bytes) }

    func add(_ bytes: [UInt8]) throws {
        if let plain { try plain.withBuffer { $0.append(contentsOf: bytes) } }
        if let zstd {
            zstd.append(bytes)
            if zstd.pendingByteCount >= 4 << 20 { try zstd.flush() }
        }
    }

    func close() throws { try plain?.close(); try zstd?.close() }
}
