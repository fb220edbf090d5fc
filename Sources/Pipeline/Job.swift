import APNs

/// One row on its way through the sender: where its bytes are, its headers, and what happened to
/// it so far.
///
/// The token and payload are slices of the CSV batch the row came from (no copy per row); the
/// headers are the row's own, or nil for the run's. A job waiting for a retry
/// is replaced by a copy with bytes of its own (`detached()`), so a long backoff never keeps a
/// whole batch alive.
///
/// A job is in exactly one place at a time — the work queue, a worker's ready list, a retry
/// timer, a worker's in-flight table (`InFlightJobs`) — and only the thread holding it touches
/// it; it moves between threads only through `HandOffQueue`s.
final class Job: @unchecked Sendable {
    let row: Int
    /// The token as it goes in `:path` (lowercase hex); usually the input's own bytes.
    ///
    /// The bytes are constants (a retry that must let its batch go makes a `detached()` job), so
    /// a request lends them from here: a `var` would be copied, a retain and release per request.
    let pathToken: ArraySlice<UInt8>
    /// The token as the input gave it, when that is not `pathToken` (uppercase hex).
    private let inputToken: ArraySlice<UInt8>?
    let payload: ArraySlice<UInt8>
    /// The row's own header values; nil for the run's (`RowDecoder.runDefaultHeaders`), which
    /// the workers hold. A reference to that one shared object, taken on the reader thread and
    /// dropped on a reactor thread, would be two atomics per row on one contended cache line.
    let headers: RowHeaders?
    /// Requests sent that APNs may have processed (not counting refused or unprocessed streams).
    var attempts = 0
    var retriedAfterConnectionLoss = false
    /// The connection a retry should avoid (500/503), or -1.
    var avoidConnection = -1
    /// APNs refused a request of this row with 429 TooManyProviderTokenUpdates: the first such
    /// refusal costs no attempt (the connection is replaced), any later one does.
    var refusedTokenUpdate = false
    /// The provider token the latest request carried, to refresh only if it is still current.
    /// Shared by reference: remembering it costs a row one retain, not a copy of four strings.
    var sentToken: SentProviderToken?
    /// Its credential group (`CampaignShared.groups`); 0 in a one-credential run.
    var group = 0
    /// `RowResult.lane`: group + 1 when records name the environment and key, else 0.
    var lane: UInt16 = 0
    /// `RowResult.fallbackFrom`: the environment a BadDeviceToken moved it from (`--environment-fallback`).
    var fallbackFrom: UInt8 = 0
    /// APNs answered UnrelatedKeyIdInToken for it once: resent on a fresh connection of its key.
    var resentAfterUnrelatedKey = false

    init(row: Int, deviceToken: ArraySlice<UInt8>, lowercaseToken: [UInt8]?, payload: ArraySlice<UInt8>,
         headers: RowHeaders?) {
        self.row = row
        if let lowercaseToken {
            pathToken = lowercaseToken[...]
            inputToken = deviceToken
        } else {
            pathToken = deviceToken
            inputToken = nil
        }
        self.payload = payload
        self.headers = headers
    }

    /// Every stored property, the bytes copied: a property added to `Job` must be carried here too.
    private init(copyingBytesOf job: Job) {
        row = job.row
        pathToken = Array(job.pathToken)[...]
        inputToken = job.inputToken.map { Array($0)[...] }
        payload = Array(job.payload)[...]
        headers = job.headers
        attempts = job.attempts
        retriedAfterConnectionLoss = job.retriedAfterConnectionLoss
        avoidConnection = job.avoidConnection
        refusedTokenUpdate = job.refusedTokenUpdate
        sentToken = job.sentToken
        group = job.group
        lane = job.lane
        fallbackFrom = job.fallbackFrom
        resentAfterUnrelatedKey = job.resentAfterUnrelatedKey
    }

    /// Exactly as the input gave it, for the result log and the dead-token report.
    var deviceToken: ArraySlice<UInt8> { inputToken ?? pathToken }

    /// This job with its token and payload in storage of their own, letting the CSV batch go.
    func detached() -> Job {
        Job(copyingBytesOf: self)
    }

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

/// A provider token as the requests that carried it remember it (see `Job.sentToken`).
final class SentProviderToken: Sendable {
    let token: ProviderToken

    init(_ token: ProviderToken) { self.token = token }
}
