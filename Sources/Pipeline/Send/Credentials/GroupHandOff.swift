import APNs

/// The reader's side of several credential groups: each row goes to its group's queue, and a full
/// queue never holds up the others. Rows for a full queue wait here (parked) while the reader reads
/// on for the other groups, up to `parkBudget` rows in all; only beyond it does the reader wait,
/// for room in any queue, so a stalled key costs memory for a bounded number of rows, never the
/// other groups' sending.
///
/// Reader thread only.
struct GroupHandOff {
    let groups: [CredentialGroup]
    let router: CredentialRouter
    /// The batch slots of the `environment` and `key_id` columns (nil: the input has none).
    let environmentSlot: Int?
    let keyIDSlot: Int?
    /// Records carry `environment` and `key_id` (more than one credential or environment in play).
    let labelsRecords: Bool
    private var pending: [[Job]]
    private var parkedCount = 0
    /// Rows `NoCredentialsForTopic` by (topic, environment), for stderr (once a pair) and the summary.
    private(set) var noCredentials = NoCredentialsTally()
    static let parkBudget = 32_768

    /// What the reader waits on while every queue its rows are parked for is full.
    private let room = RoomWakeUp()

    /// Rows per group not read yet (the prescan's count less those routed); nil without a count.
    private var unread: [Int]?

    init(groups: [CredentialGroup], router: CredentialRouter, environmentSlot: Int?, keyIDSlot: Int?, labelsRecords: Bool,
         rows: [Int]? = nil) {
        unread = rows?.count == groups.count ? rows : nil
        self.groups = groups
        self.router = router
        self.environmentSlot = environmentSlot
        self.keyIDSlot = keyIDSlot
        self.labelsRecords = labelsRecords
        pending = Array(repeating: [], count: groups.count)
    }

    /// Routes `job` (row `index` of `batch`): into its group's pending list, or a record when it
    /// is not to be sent (rejected, or its group stopped).
    mutating func route(_ job: Job, _ batch: borrowing CSVBatch, at index: Int, topic: String?,
                        records: inout [RowResult], warn: (String) -> Void) {
        // The fields lent from the batch's storage: a slice of each would retain it.
        let environmentRange = environmentSlot.flatMap { batch.fieldRange(slot: $0, at: index) }
        let keyIDRange = keyIDSlot.flatMap { batch.fieldRange(slot: $0, at: index) }
        let route = batch.storage.withUnsafeBufferPointer { storage in
            router.route(environment: environmentRange.map { UnsafeBufferPointer(rebasing: storage[$0]) },
                         keyID: keyIDRange.map { UnsafeBufferPointer(rebasing: storage[$0]) }, topic: topic)
        }
        switch route {
        case .group(let number):
            let group = groups[number]
            job.group = number
            unread?[number] -= 1
            if labelsRecords { job.lane = UInt16(number + 1) }
            if group.stop.isStopping {
                records.append(group.stop.record(job))
            } else {
                pending[number].append(job)
            }
        case .rejected(let reason, let environment):
            if reason == .noCredentialsForTopic, let environment { noCredentials.note(topic: topic, environment, warn: warn) }
            records.append(job.record(.rejected, reason: reason.rawValue, environment: environment))
        case .keyElsewhere(let key, let environment):
            noCredentials.note(topic: topic, environment, keyElsewhere: key, router: router, warn: warn)
            records.append(job.record(.rejected, reason: LocalReason.noCredentialsForTopic.rawValue, environment: environment))
        case .noEndpoint(let environment):
            // Found by the prescan, or refused before sending without one; a key's own
            // environment can still lead here (a stream): no credential can send it.
            noCredentials.note(topic: topic, environment, warn: warn)
            records.append(job.record(.rejected, reason: LocalReason.noCredentialsForTopic.rawValue, environment: environment))
        }
    }

    /// Offers every group its pending rows without waiting, and returns so the reader reads on
    /// while some group may need the rows ahead: one with rows still unread, none parked and its
    /// queue at most half full (a stalled group's rows park, up to `parkBudget` in all, while the
    /// others' are read). Otherwise (every queue that wants rows is full: a fast reader's steady
    /// state) it waits until a consumer makes room, woken by the queues (`RoomWakeUp`), instead of
    /// parking on: parked rows only held memory, and rows read far ahead are cold by the time
    /// they are sent (the ten-key benchmark's RSS went from 58 to 150 MiB that way). Without the
    /// prescan's counts any group may need the rows ahead. With `draining`, it waits until none
    /// is parked. Rows of a group that stopped meanwhile end as its stop says.
    mutating func hand(draining: Bool = false, shouldStop: () -> Bool) {
        while true {
            parkedCount = 0
            for number in groups.indices where !pending[number].isEmpty {
                let group = groups[number]
                group.work.offer(moving: &pending[number])
                if !pending[number].isEmpty && group.work.isClosed {
                    group.stop.recordAndHand(pending[number])
                    pending[number].removeAll()
                }
                parkedCount += pending[number].count
            }
            if parkedCount == 0 { return }
            if !draining && Self.readsOn(parked: parkedCount, mayNeedRowsAhead: mayNeedRowsAhead) { return }
            if shouldStop() && !draining { return }
            // Until a queue with rows parked has room for half a queue (or all of them), or one
            // that wants rows ahead is half empty (which, over the budget, does not make the reader
            // read on): a wake-up hands on or reads many rows. The timeout only bounds how late a
            // stop is seen.
            room.arm()
            for number in groups.indices {
                let queue = groups[number].work
                let half = Swift.max(1, queue.capacity / 2)
                if !pending[number].isEmpty {
                    queue.wakeWhenRoom(Swift.min(pending[number].count, half), room)
                } else if !draining && parkedCount <= Self.parkBudget && (unread?[number] ?? 1) > 0 {
                    queue.wakeWhenRoom(half, room)
                }
            }
            room.wait(timeoutSeconds: 0.05)
        }
    }

    /// Some group has rows ahead in the input (or the counts are unknown), none parked, and a
    /// queue at most half full.
    private var mayNeedRowsAhead: Bool {
        Self.mayNeedRowsAhead(unread: unread, parked: pending.map(\.count),
                              hungry: groups.map { $0.work.freeRoom >= $0.work.capacity / 2 })
    }

    /// The rule of `hand`, apart for its tests: with `parked` rows waiting for full queues, the
    /// reader reads on while under the budget and either under the floor or some group may need
    /// the rows ahead.
    static func readsOn(parked: Int, mayNeedRowsAhead: Bool) -> Bool {
        parked <= parkBudget && (parked <= parkFloor || mayNeedRowsAhead)
    }

    /// Whether a group with rows still unread (`unread`, by group; nil: not counted) has none
    /// parked (`parked`, by group) and a queue at most half full (`hungry`, by group): one whose
    /// queue is fuller has rows to send for a while, and reading on for it only parks rows.
    static func mayNeedRowsAhead(unread: [Int]?, parked: [Int], hungry: [Bool]) -> Bool {
        parked.indices.contains { group in (unread?[group] ?? 1) > 0 && parked[group] == 0 && hungry[group] }
    }

    /// Rows that may stay parked while every queue is full: about a batch's worth, so the reader
    /// does not wait on a queue that is a few rows short.
    static let parkFloor = 2048

    /// The reader is done: every pending row is handed on, then each queue closes.
    mutating func finish() {
        hand(draining: true, shouldStop: { false })
        for group in groups {
            group.work.close()
            group.stop.recordQueuedWork()
        }
    }
}
