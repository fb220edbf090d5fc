/// The reader's duplicate check: the first row of each key (token in lower case, topic after the
/// run's `--topic` fills an empty one) is sent, a later one is `rejected` `DuplicateToken` naming
/// it. Only rows that would be sent take part: a row rejected for a reason of its own is no first
/// row, so a good row after it with the same token is still sent.
///
/// Two modes, by what the run knows before it sends:
/// - `suspects` (after a prescan): the hashes of keys the prescan's Bloom filter saw more than once.
///   A row whose hash is not one (nearly every row) pays a hash and one table probe; a suspect row
///   goes into an exact dictionary of full keys, so a Bloom or hash false hit never rejects a row.
///   Memory: 8–16 bytes per suspect, and ~150 bytes per key that really repeats.
/// - `hashes` (no prescan: a stream, `--no-prescan`, rows from memory): every key's 64-bit hash
///   with its first row, ~16–32 bytes a distinct key (160–320 MB at 10M rows). Two different keys
///   share a hash with odds of about n²/2⁶⁵ (1 in 370,000 for a 10M-row campaign).
///
/// Used by the reader thread only.
final class DuplicateTokens {
    /// The `reason` of a later row's record.
    static let reason = LocalReason.duplicateToken.rawValue

    private let suspects: DuplicateSuspectTable?
    private var exact: [[UInt8]: Int] = [:]
    private var firstRowOfHash: [UInt64: UInt32] = [:]
    private let defaultTopic: [UInt8]
    private let defaultTopicHash: UInt64

    /// `suspects` from the prescan, or nil for the stream mode.
    init(suspects: [UInt64]?, defaultTopic: String?) {
        self.suspects = suspects.map(DuplicateSuspectTable.init)
        self.defaultTopic = Array((defaultTopic ?? "").utf8)
        defaultTopicHash = self.defaultTopic.withUnsafeBytes { DuplicateKeyHash.topic($0) }
    }

    /// `firstRow(of:token:topic:)` for a job's token, read in place from its bytes.
    @inline(__always)
    func firstRow(of job: Job, topic: ArraySlice<UInt8>?) -> Int? {
        let tokenHash = job.withPathToken { DuplicateKeyHash.token($0) }
        let hash = DuplicateKeyHash.combine(token: tokenHash, topic: topicHash(topic))
        guard let suspects else { return firstRowInHashes(of: job.row, hash: hash) }
        guard suspects.contains(hash) else { return nil }
        return firstRowExact(of: job.row, token: job.pathToken, topic: topic.flatMap { $0.isEmpty ? nil : $0 })
    }

    private func topicHash(_ topic: ArraySlice<UInt8>?) -> UInt64 {
        guard let topic, !topic.isEmpty else { return defaultTopicHash }
        return topic.withUnsafeBytes { DuplicateKeyHash.topic($0) }
    }

    /// The first row with `row`'s key, or nil when `row` is the first (it is then remembered).
    /// `token` is the lower-case token (`Job.pathToken`); `topic` the row's own topic field, if any.
    @inline(__always)
    func firstRow(of row: Int, token: ArraySlice<UInt8>, topic: ArraySlice<UInt8>?) -> Int? {
        let ownTopic = topic.flatMap { $0.isEmpty ? nil : $0 }
        let tokenHash = token.withUnsafeBytes { DuplicateKeyHash.token($0) }
        let topicHash = ownTopic.map { $0.withUnsafeBytes { DuplicateKeyHash.topic($0) } } ?? defaultTopicHash
        let hash = DuplicateKeyHash.combine(token: tokenHash, topic: topicHash)
        guard let suspects else { return firstRowInHashes(of: row, hash: hash) }
        guard suspects.contains(hash) else { return nil }
        return firstRowExact(of: row, token: token, topic: ownTopic)
    }

    @inline(never)
    private func firstRowInHashes(of row: Int, hash: UInt64) -> Int? {
        if let first = firstRowOfHash[hash] { return Int(first) }
        firstRowOfHash[hash] = UInt32(truncatingIfNeeded: row)
        return nil
    }

    @inline(never)
    private func firstRowExact(of row: Int, token: ArraySlice<UInt8>, topic: ArraySlice<UInt8>?) -> Int? {
        var key = Array(token)
        key.append(0)
        key.append(contentsOf: topic ?? defaultTopic[...])
        if let first = exact[key] { return first }
        exact[key] = row
        return nil
    }
}

/// The suspects as an open-addressing set (0 marks an empty slot; no key hashes to 0), twice as
/// many slots as suspects: a row not among them (the usual case) costs one probe. Immutable.
struct DuplicateSuspectTable {
    private let slots: [UInt64]
    private let mask: Int

    init(_ suspects: [UInt64]) {
        var count = 16
        while count < suspects.count * 2 { count *= 2 }
        var slots = [UInt64](repeating: 0, count: count)
        for hash in suspects {
            var index = Int(truncatingIfNeeded: hash >> 7) & (count - 1)
            while slots[index] != 0 && slots[index] != hash { index = (index + 1) & (count - 1) }
            slots[index] = hash
        }
        self.slots = slots
        mask = count - 1
    }

    @inline(__always)
    func contains(_ hash: UInt64) -> Bool {
        var index = Int(truncatingIfNeeded: hash >> 7) & mask
        while true {
            let slot = slots[index]
            if slot == hash { return true }
            if slot == 0 { return false }
            index = (index + 1) & mask
        }
    }
}

extension DuplicateTokens {
    /// The row's own non-empty topic; nil (no slice, which would retain the batch) for the usual row.
    @inline(__always)
    static func ownTopic(_ batch: borrowing CSVBatch, at index: Int) -> ArraySlice<UInt8>? {
        guard let range = batch.fieldRange(.topic, at: index), !range.isEmpty else { return nil }
        return batch.field(.topic, at: index)
    }
}
