/// `--shard K/N`: this process sends only shard K of N of the campaign, so that N processes (pods
/// of a Kubernetes Indexed Job, machines) send one campaign between them, each row exactly once.
///
/// A row belongs to the shard its device token hashes to, so every copy of a token (in any case)
/// lands in one shard and one process can tell them apart. The hash is FNV-1a 64 of the token's
/// bytes with spaces and tabs around them dropped and ASCII letters lowered, taken mod N: fixed and
/// documented (docs/sending.md, "Shards"), never Swift's per-process-seeded `Hasher`, so every process and
/// any other tool agrees. A row with no token to hash (the field empty or absent, or a row the
/// reader rejects as a whole: wrong field count, a field over 64 KiB) belongs to shard row mod N,
/// so that it still lands in exactly one shard's log.
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    /// K, in 0..<count.
    public let index: Int
    /// N, at least 1.
    public let count: Int

    /// Why a `--shard` value is refused (exit 1, before anything is read or sent).
    public struct ParseError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Shard `index` of `count`; nil unless 0 <= index < count.
    public init?(index: Int, count: Int) {
        guard count >= 1, index >= 0, index < count else { return nil }
        self.index = index
        self.count = count
    }

    /// `K/N` as `--shard` takes it.
    public init(parsing text: String) throws(ParseError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
            throw ParseError(description: "--shard \(text): give K/N, shard K of N counted from 0 "
                             + "(e.g. --shard 0/3, --shard 1/3 and --shard 2/3 between them send the whole campaign)")
        }
        guard count >= 1 else {
            throw ParseError(description: "--shard \(text): N must be at least 1 (the number of shards)")
        }
        guard let shard = Shard(index: index, count: count) else {
            throw ParseError(description: "--shard \(text): K must be in 0...\(count - 1), shards are counted from 0 "
                             + "(a Kubernetes Indexed Job's JOB_COMPLETION_INDEX is)")
        }
        self = shard
    }

    /// `K/N`, as campaign.json and summary.json record it.
    public var description: String { "\(index)/\(count)" }

    /// FNV-1a 64 of `token` with spaces and tabs around it dropped and A-Z lowered: the shard key.
    /// Nil when nothing is left to hash.
    public static func hash(token: ArraySlice<UInt8>) -> UInt64? {
        token.withUnsafeBufferPointer { bytes -> UInt64? in
            var start = 0, end = bytes.count
            while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
            while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
            guard start < end else { return nil }
            var hash = fnvOffsetBasis
            for offset in start..<end {
                let byte = bytes[offset]
                let lowered = byte &- 0x41 < 26 ? byte | 0x20 : byte
                hash = (hash ^ UInt64(lowered)) &* fnvPrime
            }
            return hash
        }
    }

    /// FNV-1a 64's parameters.
    static let fnvOffsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    static let fnvPrime: UInt64 = 0x0000_0100_0000_01b3

    /// Which shard of `count` a row goes to: its token's hash mod N, or its row number mod N when
    /// it has no token to hash.
    public static func of(token: ArraySlice<UInt8>?, row: Int, count: Int) -> Int {
        if let token, let hash = hash(token: token) { return Int(hash % UInt64(count)) }
        return row % count
    }

    /// Whether row `index` of `batch` is this shard's. A row the reader rejects as a whole is
    /// placed by its number: its token field may be a shifted column or missing.
    func owns(_ batch: borrowing CSVBatch, at index: Int) -> Bool {
        let token = batch.problem(at: index) == nil ? batch.field(.deviceToken, at: index) : nil
        return Self.of(token: token, row: batch.number(at: index), count: count) == self.index
    }
}
