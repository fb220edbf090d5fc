#if canImport(Glibc)
import Glibc
#endif
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
        let route = router.route(environment: environmentSlot.flatMap { batch.field(slot: $0, at: index) },
                                 keyID: keyIDSlot.flatMap { batch.field(slot: $0, at: index) }, topic: topic)
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
        case .noEndpoint(let environment):
            // Found by the prescan, or refused before sending without one; a key's own
            // environment can still lead here (a stream): no credential can send it.
            noCredentials.note(topic: topic, environment, warn: warn)
            records.append(job.record(.rejected, reason: LocalReason.noCredentialsForTopic.rawValue, environment: environment))
        }
    }

    /// Offers every group its pending rows without waiting, and returns so the reader reads on
    /// while some group may need the rows ahead: one with rows still unread and none parked (a
    /// stalled group's rows park, up to `parkBudget` in all, while the others' are read). When
    /// every group with rows ahead has rows parked (all queues full: a fast reader's steady
    /// state) it waits for room instead of parking on, which only held rows in memory (the
    /// ten-key benchmark's RSS went from 58 to 150 MiB that way). Without the prescan's counts
    /// any group may need the rows ahead. With `draining`, it waits until none is parked. Rows of
    /// a group that stopped meanwhile end as its stop says.
    mutating func hand(draining: Bool = false, shouldStop: () -> Bool) {
        var idle = 0
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
            // Full queues everywhere rows wait: a moment, then try again.
            idle += 1
            usleep(idle < 10 ? 200 : 1000)
        }
    }

    /// Some group has rows ahead in the input and none parked (or the counts are unknown).
    private var mayNeedRowsAhead: Bool {
        Self.mayNeedRowsAhead(unread: unread, parked: pending.map(\.count))
    }

    /// The rule of `hand`, apart for its tests: with `parked` rows waiting for full queues, the
    /// reader reads on while under the budget and either under the floor or some group may need
    /// the rows ahead.
    static func readsOn(parked: Int, mayNeedRowsAhead: Bool) -> Bool {
        parked <= parkBudget && (parked <= parkFloor || mayNeedRowsAhead)
    }

    /// Whether a group with rows still unread (`unread`, by group; nil: not counted) has none
    /// parked (`parked`, by group).
    static func mayNeedRowsAhead(unread: [Int]?, parked: [Int]) -> Bool {
        guard let unread else { return true }
        return parked.indices.contains { unread[$0] > 0 && parked[$0] == 0 }
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
