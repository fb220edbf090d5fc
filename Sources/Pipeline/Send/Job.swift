import APNs

/// One row on its way through the sender: its number, its token, payload and headers (`RowBytes`),
/// and what happened to it so far.
///
/// A job is in exactly one place at a time — the work queue, a worker's ready list, a retry
/// timer, a worker's in-flight table (`InFlightJobs`) — and only the thread holding it touches
/// it; it moves between threads only through `HandOffQueue`s. Once its row is recorded it may go
/// back to the reader for another row (`JobPool`, `reuse`), never while anything else holds it.
final class Job: @unchecked Sendable {
    /// The row's number in the input; changes only in `reuse`.
    @exclusivity(unchecked) private(set) var row: Int
    @exclusivity(unchecked) private var rowBytes: RowBytes

    // What happened to it so far (`carryHistory`).
    /// Requests sent that APNs may have processed (not counting refused or unprocessed streams).
    @exclusivity(unchecked) var attempts = 0
    @exclusivity(unchecked) var retriedAfterConnectionLoss = false
    /// The connection a retry should avoid (500/503), or -1.
    @exclusivity(unchecked) var avoidConnection = -1
    /// APNs refused a request of this row with 429 TooManyProviderTokenUpdates: the first such
    /// refusal costs no attempt (the connection is replaced), any later one does.
    @exclusivity(unchecked) var refusedTokenUpdate = false
    /// The provider token the latest request carried, to refresh only if it is still current: its
    /// index in its worker's `sentTokens` (nil once the job leaves that worker).
    @exclusivity(unchecked) var sentToken: UInt32?
    /// Its credential group (`CampaignShared.groups`); 0 in a one-credential run.
    @exclusivity(unchecked) var group = 0
    /// `RowResult.lane`: group + 1 when records name the environment and key, else 0.
    @exclusivity(unchecked) var lane: UInt16 = 0
    /// `RowResult.fallbackFrom`: the environment a BadDeviceToken moved it from (`--environment-fallback`).
    @exclusivity(unchecked) var fallbackFrom: UInt8 = 0
    /// APNs answered UnrelatedKeyIdInToken for it once: resent on a fresh connection of its key.
    @exclusivity(unchecked) var resentAfterUnrelatedKey = false

    @inline(__always)
    init(row: Int, _ rowBytes: consuming RowBytes) {
        self.row = row
        self.rowBytes = rowBytes
    }

    /// This spent job (`SpentJobs.keep`) made the job of a new row, as `init(row:_:)` makes one.
    /// Inlined into the decoder, as `init`: the row's bytes are stored in place, not passed by reference.
    @inline(__always)
    func reuse(row: Int, _ rowBytes: consuming RowBytes) {
        self.row = row
        self.rowBytes = rowBytes
        carryHistory(of: nil)
    }

    /// This job with its bytes in a buffer of their own, letting the CSV batch go.
    func detached() -> Job {
        let copy = Job(row: row, rowBytes.detached())
        copy.carryHistory(of: self)
        return copy
    }

    /// What happened to the row so far: `job`'s (a retry's copy), or nothing yet (nil: a new row).
    /// The one list of the fields beyond the row and its bytes: a field added above is added here.
    private func carryHistory(of job: Job?) {
        attempts = job?.attempts ?? 0
        retriedAfterConnectionLoss = job?.retriedAfterConnectionLoss ?? false
        avoidConnection = job?.avoidConnection ?? -1
        refusedTokenUpdate = job?.refusedTokenUpdate ?? false
        sentToken = job?.sentToken
        group = job?.group ?? 0
        lane = job?.lane ?? 0
        fallbackFrom = job?.fallbackFrom ?? 0
        resentAfterUnrelatedKey = job?.resentAfterUnrelatedKey ?? false
    }

    // MARK: Its bytes (see `RowBytes`)

    /// The buffer `pathToken`, `deviceToken` and (unless it is the run's) the payload are ranges of.
    var bytes: [UInt8] { rowBytes.buffer }
    var pathToken: ArraySlice<UInt8> { rowBytes.pathToken }
    var pathTokenRange: Range<Int> { rowBytes.pathTokenRange }
    func withPathToken<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result { rowBytes.withPathToken(body) }
    var deviceToken: ArraySlice<UInt8> { rowBytes.deviceToken }
    var inputTokenRange: Range<Int> { rowBytes.inputTokenRange }
    var payloadIsInBytes: Bool { rowBytes.payloadIsInBytes }
    var payloadRange: Range<Int> { rowBytes.payloadRange }
    func payload(runPayload: ArraySlice<UInt8>) -> ArraySlice<UInt8> { rowBytes.payload(runPayload: runPayload) }
    var headers: RowHeaders? { rowBytes.headers }

    @inline(__always)
    func withHeaders<Result>(_ body: (RowHeaders?) -> Result) -> Result { rowBytes.withHeaders(body) }

    /// `deviceToken` for the record of a row that ends here: the job's last use, its bytes gone after.
    func takeDeviceToken() -> ArraySlice<UInt8> { rowBytes.takeDeviceToken() }

    /// Ready for `JobPool`: holds no batch and no headers; false while its bytes are still its own.
    func spend() -> Bool { rowBytes.spend() }

    // MARK: Records

    /// The record for a row that ends without (another) answer from APNs.
    func record(_ outcome: Outcome, reason: String?) -> RowResult {
        RowResult(row: row, deviceToken: deviceToken, outcome: outcome, reason: reason, attempts: attempts,
                  retriedAfterConnectionLoss: retriedAfterConnectionLoss, lane: lane, fallbackFrom: fallbackFrom)
    }

    /// The record of a row no group took (rejected by the credential rules), naming its environment.
    func record(_ outcome: Outcome, reason: String?, environment: APNsEnvironment?) -> RowResult {
        RowResult(row: row, deviceToken: deviceToken, outcome: outcome, reason: reason, attempts: attempts,
                  environmentCode: RowResult.code(of: environment))
    }

    /// The record for a row that a stop ends (see `RunStop`).
    func record(stoppedBy cause: StopCause) -> RowResult {
        record(cause.outcomeForUnfinishedRows, reason: cause.reasonForUnfinishedRows)
    }
}
