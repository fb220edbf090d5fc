/// The prescan's half of duplicate detection. `CSVRecordCounter` tells it where the token and
/// topic fields of each row begin and end in the chunk it scans; at each data row's end their
/// key's hash goes into a Bloom filter, and a hash the filter has (probably) seen is a suspect.
/// The suspects, a small sorted array, are all the reader needs: a row whose hash is not one is
/// no duplicate and pays one table look-up; only the rows that are go into an exact check.
///
/// The captured bytes are what libcsv gives the reader: spaces and tabs around an unquoted field
/// trimmed, a quoted field's content exactly with `""` made `"`. Used by the prescan's thread.
final class DuplicateTokensScan {
    /// A field this long (only an absurd one) makes the scan give up: the reader then uses its
    /// stream mode (`DuplicateTokens.hashes`), exact up to 64-bit hash collisions.
    static let captureLimit = 4096

    let tokenField: Int
    let topicField: Int
    /// The `environment` and `key_id` fields, captured for `groups` (-1: not captured).
    let environmentField: Int
    let keyIDField: Int
    /// Counts each credential group's rows from the captured fields (a several-key run).
    let groups: GroupRowTally?
    /// Whether the Bloom filter is fed (off when the scan runs for `groups` alone).
    private let findsDuplicates: Bool
    private let defaultTopicHash: UInt64
    // Stored properties of a class are checked for exclusive access at run time on each use (a
    // call into the runtime); this one is used by one thread, per field, and so spares that.
    /// Freed with the scan, when the prescan returns. A constant: binding an optional per row
    /// cost a retain and a release.
    let bloom: DuplicateBloom
    /// With two scans sharing `bloom` (`PrescanHalves`), the half of it this one inserts into
    /// (-1: all of it); a key of the other half goes to `othersKeys`, for the other scan to insert.
    @exclusivity(unchecked) var ownHalf = -1
    @exclusivity(unchecked) var othersKeys: [UInt64] = []
    @exclusivity(unchecked) private(set) var suspects: [UInt64] = []
    /// Set when the scan could not finish (a field over `captureLimit`): no suspects then.
    @exclusivity(unchecked) private(set) var incomplete = false

    @exclusivity(unchecked) private var field = 0
    /// The field being captured: 0 none, 1 the token, 2 the topic, 3 the environment, 4 the key id.
    @exclusivity(unchecked) private var capturing = 0
    @exclusivity(unchecked) private var captureStart = 0
    /// The captured fields, `captureLimit` bytes each, owned here (freed in deinit): no array
    /// bookkeeping per row.
    private let token: UnsafeMutablePointer<UInt8>
    private let topic: UnsafeMutablePointer<UInt8>
    private let environment: UnsafeMutablePointer<UInt8>
    private let keyID: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var tokenCount = 0
    @exclusivity(unchecked) private var topicCount = 0
    @exclusivity(unchecked) private var environmentCount = 0
    @exclusivity(unchecked) private var keyIDCount = 0
    /// Hashes whose filter block is being fetched, inserted `insertDelay` rows later in the same
    /// order (so the suspects are the same): the insert then finds its block in cache instead of
    /// stalling on it. A ring owned here (freed in deinit).
    private let delayed: UnsafeMutablePointer<UInt64>
    @exclusivity(unchecked) private var delayedCount = 0
    @exclusivity(unchecked) private var delayedHead = 0
    static let insertDelay = 4

    /// - Parameters:
    ///   - header: the input's header (which fields hold the token and the topic).
    ///   - defaultTopic: `--topic`, the key's topic for a row with an empty one.
    ///   - bloomBytes: the filter's size (a test makes it tiny, so that nearly every row is a suspect).
    ///   - hugePages: the filter on 2 MiB pages (`DuplicateBloom`), for an input that touches all of it.
    ///   - findsDuplicates: false when the scan is made for `groups` alone (no filter then).
    ///   - groups: counts the credential groups' rows; left out (the caller counts otherwise)
    ///     when the header names `environment` or `key_id` twice.
    ///   - sharing: another scan's filter, to share with it (`ownHalf` then splits the inserts).
    init(header: CSVHeader, defaultTopic: String?, bloomBytes: Int, hugePages: Bool = false, findsDuplicates: Bool = true,
         groups: GroupRowTally? = nil, sharing: DuplicateBloom? = nil) {
        tokenField = header.fieldIndex(.deviceToken) ?? -1
        topicField = header.fieldIndex(.topic) ?? -1
        let groupFields = groups == nil ? nil : GroupRowTally.fields(of: header)
        environmentField = groupFields?.environment ?? -1
        keyIDField = groupFields?.keyID ?? -1
        self.groups = groupFields == nil ? nil : groups
        self.findsDuplicates = findsDuplicates
        let topic = Array((defaultTopic ?? "").utf8)
        defaultTopicHash = topic.withUnsafeBytes { DuplicateKeyHash.topic($0) }
        bloom = sharing ?? DuplicateBloom(bytes: findsDuplicates ? bloomBytes : 64, hugePages: hugePages && findsDuplicates)
        token = .allocate(capacity: Self.captureLimit)
        self.topic = .allocate(capacity: Self.captureLimit)
        environment = .allocate(capacity: Self.captureLimit)
        keyID = .allocate(capacity: Self.captureLimit)
        delayed = .allocate(capacity: Self.insertDelay)
    }

    deinit {
        token.deallocate()
        topic.deallocate()
        environment.deallocate()
        keyID.deallocate()
        delayed.deallocate()
    }

    /// A field begins at `index` of the chunk (after a quoted field's opening quote).
    @inline(__always)
    func fieldBegins(at index: Int) {
        let code = field == tokenField ? 1 : field == topicField ? 2 : field == environmentField ? 3 : field == keyIDField ? 4 : 0
        guard code != 0 else { return }
        captureStart = index
        capturing = code
    }

    /// The unquoted field being captured ends before `index`: its trailing spaces and tabs go.
    @inline(__always)
    func unquotedEnds(at index: Int, _ base: UnsafePointer<UInt8>) {
        guard capturing != 0 else { return }
        take(base, upTo: index)
        unquotedEndsAtInputEnd()
    }

    /// The input ends inside the unquoted field being captured (its bytes taken at the chunk's end).
    func unquotedEndsAtInputEnd() {
        switch capturing {
        case 1: Self.trimEnd(token, &tokenCount)
        case 2: Self.trimEnd(topic, &topicCount)
        case 3: Self.trimEnd(environment, &environmentCount)
        case 4: Self.trimEnd(keyID, &keyIDCount)
        default: break
        }
        capturing = 0
    }

    /// The quoted field being captured ends before `index` (a comma or line end after its closing
    /// quote). What was taken is its text as written, the closing quote and any spaces after it:
    /// those go, and `""` becomes `"` (the counter skips a `""` inside a word without a stop, so
    /// the unescaping is done here, over the whole field, once).
    @inline(__always)
    func quotedEnds(at index: Int, _ base: UnsafePointer<UInt8>) {
        guard capturing != 0 else { return }
        take(base, upTo: index)
        quotedEndsAtInputEnd()
    }

    /// The input ends after the quoted field being captured (its bytes taken at the chunk's end).
    func quotedEndsAtInputEnd() {
        switch capturing {
        case 1: Self.unquote(token, &tokenCount)
        case 2: Self.unquote(topic, &topicCount)
        case 3: Self.unquote(environment, &environmentCount)
        case 4: Self.unquote(keyID, &keyIDCount)
        default: break
        }
        capturing = 0
    }

    @inline(__always)
    func nextField() { field &+= 1 }

    /// The chunk ends inside the field being captured: its bytes so far are taken.
    @inline(__always)
    func chunkEnds(count: Int, _ base: UnsafePointer<UInt8>, inField: Bool) {
        guard capturing != 0 else { return }
        if inField { take(base, upTo: count) }
        captureStart = 0
    }

    /// A record ended; the first is the header.
    @inline(__always)
    func rowEnds(isHeader: Bool) {
        defer {
            field = 0
            capturing = 0
            tokenCount = 0
            topicCount = 0
            environmentCount = 0
            keyIDCount = 0
        }
        guard !isHeader, !incomplete else { return }
        if let groups {
            groups.count(topic: UnsafeBufferPointer(start: topic, count: topicCount),
                         environment: environmentField < 0 ? nil : UnsafeBufferPointer(start: environment, count: environmentCount),
                         keyID: keyIDField < 0 ? nil : UnsafeBufferPointer(start: keyID, count: keyIDCount))
        }
        guard findsDuplicates else { return }
        let tokenHash = DuplicateKeyHash.token(UnsafeRawBufferPointer(start: token, count: tokenCount))
        let topicHash = topicCount == 0 ? defaultTopicHash
            : DuplicateKeyHash.topic(UnsafeRawBufferPointer(start: topic, count: topicCount))
        let hash = DuplicateKeyHash.combine(token: tokenHash, topic: topicHash)
        if ownHalf >= 0 && bloom.half(of: hash) != ownHalf {
            othersKeys.append(hash)
            return
        }
        bloom.prefetch(hash)
        if delayedCount == Self.insertDelay {
            insert(delayed[delayedHead])
            delayed[delayedHead] = hash
            delayedHead = delayedHead == Self.insertDelay - 1 ? 0 : delayedHead + 1
        } else {
            delayed[(delayedHead + delayedCount) % Self.insertDelay] = hash
            delayedCount += 1
        }
    }

    /// Inserts the keys the other scan found for this one's half (`othersKeys` of it), fetching
    /// each block `insertDelay` keys ahead.
    func insert(othersKeys keys: [UInt64]) {
        guard findsDuplicates else { return }
        keys.withUnsafeBufferPointer { keys in
            for index in 0..<min(Self.insertDelay, keys.count) { bloom.prefetch(keys[index]) }
            for index in keys.indices {
                if index + Self.insertDelay < keys.count { bloom.prefetch(keys[index + Self.insertDelay]) }
                insert(keys[index])
            }
        }
    }

    @inline(__always)
    private func insert(_ hash: UInt64) {
        guard bloom.insert(hash) else { return }
        suspect(hash)
    }

    @inline(never)
    private func suspect(_ hash: UInt64) {
        if suspects.count == suspects.capacity && suspects.count >= 4096 { compact() }
        suspects.append(hash)
    }

    /// The scan is over: the suspects come sorted, each once; nil when the scan could not finish.
    func finish() -> [UInt64]? {
        guard !incomplete else { return nil }
        groups?.isComplete = true
        while delayedCount > 0 {
            insert(delayed[delayedHead])
            delayedHead = delayedHead == Self.insertDelay - 1 ? 0 : delayedHead + 1
            delayedCount -= 1
        }
        compact()
        return suspects
    }

    /// Two scans' suspects (each sorted, each once) as one such list.
    static func merge(_ first: [UInt64], _ second: [UInt64]) -> [UInt64] {
        var merged = first + second
        sortUnique(&merged)
        return merged
    }

    /// A key seen many times adds its hash as often: sorted and made unique, the array stays the
    /// size of the keys that repeat.
    private func compact() { Self.sortUnique(&suspects) }

    private static func sortUnique(_ hashes: inout [UInt64]) {
        hashes.sort()
        var kept = 0
        for hash in hashes where kept == 0 || hashes[kept - 1] != hash {
            hashes[kept] = hash
            kept += 1
        }
        hashes.removeSubrange(kept...)
    }

    @inline(__always)
    private func take(_ base: UnsafePointer<UInt8>, upTo end: Int) {
        guard end > captureStart else { return }
        let length = end - captureStart
        let start = captureStart
        captureStart = end
        switch capturing {
        case 1: append(base + start, length, to: token, &tokenCount)
        case 2: append(base + start, length, to: topic, &topicCount)
        case 3: append(base + start, length, to: environment, &environmentCount)
        default: append(base + start, length, to: keyID, &keyIDCount)
        }
    }

    @inline(__always)
    private func append(_ bytes: UnsafePointer<UInt8>, _ length: Int, to buffer: UnsafeMutablePointer<UInt8>, _ count: inout Int) {
        guard count + length <= Self.captureLimit else {
            incomplete = true
            capturing = 0
            return
        }
        (buffer + count).update(from: bytes, count: length)
        count += length
    }

    private static func unquote(_ buffer: UnsafeMutablePointer<UInt8>, _ count: inout Int) {
        trimEnd(buffer, &count)
        if count > 0 && buffer[count - 1] == 0x22 { count -= 1 }
        var kept = 0
        var index = 0
        while index < count {
            buffer[kept] = buffer[index]
            index += buffer[index] == 0x22 && index + 1 < count && buffer[index + 1] == 0x22 ? 2 : 1
            kept += 1
        }
        count = kept
    }

    @inline(__always)
    private static func trimEnd(_ buffer: UnsafeMutablePointer<UInt8>, _ count: inout Int) {
        while count > 0 && (buffer[count - 1] == 0x20 || buffer[count - 1] == 0x09) { count -= 1 }
    }
}

extension CSVHeader {
    /// The 0-based field of `column` in a row, nil when the header lacks it.
    func fieldIndex(_ column: CSVColumn) -> Int? {
        names.firstIndex { CSVColumn(headerName: $0.trimmingSpaces) == column }
    }
}
