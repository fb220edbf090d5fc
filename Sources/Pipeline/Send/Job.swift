import APNs

/// One row on its way through the sender: where its bytes are, its headers, and what happened to
/// it so far.
///
/// The token and payload are ranges of one buffer, usually the storage of the CSV batch the row
/// came from (no copy per row): one reference for both, so a row costs the batch's storage one
/// retain and one release (an atomic each, on a line the reader and the reactor threads share),
/// not one per slice. The headers are the row's own, or nil for the run's. A job waiting for a
/// retry is replaced by a copy with bytes of its own (`detached()`), so a long backoff never keeps
/// a whole batch alive.
///
/// A job is in exactly one place at a time — the work queue, a worker's ready list, a retry
/// timer, a worker's in-flight table (`InFlightJobs`) — and only the thread holding it touches
/// it; it moves between threads only through `HandOffQueue`s. Once its row is recorded it may go
/// back to the reader for another row (`JobPool`, `reuse`), never while anything else holds it.
final class Job: @unchecked Sendable {
    // The row's fields change only in `reuse` (a spent job taking a new row, `JobPool`).
    @exclusivity(unchecked) private(set) var row: Int
    /// The buffer `pathToken`, `deviceToken` and (unless it is the run's) the payload are ranges of.
    ///
    /// Never changed but by `takeDeviceToken()`, the job's last use (a retry that must let its
    /// batch go makes a `detached()` job instead), and by `reuse` for a new row, so a request
    /// lends its bytes from here.
    @exclusivity(unchecked) private(set) var bytes: [UInt8]
    // Offsets in `bytes`, 32 bits each: a batch's storage stays below 2 GiB (its bounds are Int32).
    @exclusivity(unchecked) private var pathStart: Int32
    @exclusivity(unchecked) private var pathEnd: Int32
    /// The token as the input gave it: `pathToken`'s range unless that one is a lowercased copy.
    @exclusivity(unchecked) private var inputStart: Int32
    @exclusivity(unchecked) private var inputEnd: Int32
    /// -1: the run's `--payload-file` payload, which the workers hold (`payload(runPayload:)`). A
    /// reference to that one array, taken on the reader thread and dropped on a reactor thread,
    /// would be two atomics per row on a line every thread changes.
    @exclusivity(unchecked) private var payloadStart: Int32
    @exclusivity(unchecked) private var payloadEnd: Int32
    /// The row's own header values; nil for the run's (`RowDecoder.runDefaultHeaders`), which
    /// the workers hold. A reference to that one shared object, taken on the reader thread and
    /// dropped on a reactor thread, would be two atomics per row on one contended cache line.
    ///
    /// Held by hand (+1, released in `deinit` or `spend()`) so that `reuse` can change it while
    /// the hot path still borrows it (`withHeaders`): a plain `var` is retained and released
    /// around each read.
    @exclusivity(unchecked) private var heldHeaders: Unmanaged<RowHeaders>?
    var headers: RowHeaders? { heldHeaders?.takeUnretainedValue() }

    /// `body` with the row's own headers (nil: the run's), borrowed: no retain and release.
    @inline(__always)
    func withHeaders<Result>(_ body: (RowHeaders?) -> Result) -> Result {
        guard let heldHeaders else { return body(nil) }
        return heldHeaders._withUnsafeGuaranteedRef { body($0) }
    }
    /// Requests sent that APNs may have processed (not counting refused or unprocessed streams).
    @exclusivity(unchecked) var attempts = 0
    @exclusivity(unchecked) var retriedAfterConnectionLoss = false
    /// The connection a retry should avoid (500/503), or -1.
    @exclusivity(unchecked) var avoidConnection = -1
    /// APNs refused a request of this row with 429 TooManyProviderTokenUpdates: the first such
    /// refusal costs no attempt (the connection is replaced), any later one does.
    @exclusivity(unchecked) var refusedTokenUpdate = false
    /// The provider token the latest request carried, to refresh only if it is still current: its
    /// index in its worker's `sentTokens` (nil once the job leaves that worker). An index, not a
    /// reference: remembering a shared object cost a row a retain and a release.
    @exclusivity(unchecked) var sentToken: UInt32?
    /// Its credential group (`CampaignShared.groups`); 0 in a one-credential run.
    @exclusivity(unchecked) var group = 0
    /// `RowResult.lane`: group + 1 when records name the environment and key, else 0.
    @exclusivity(unchecked) var lane: UInt16 = 0
    /// `RowResult.fallbackFrom`: the environment a BadDeviceToken moved it from (`--environment-fallback`).
    @exclusivity(unchecked) var fallbackFrom: UInt8 = 0
    /// APNs answered UnrelatedKeyIdInToken for it once: resent on a fresh connection of its key.
    @exclusivity(unchecked) var resentAfterUnrelatedKey = false

    /// A job whose token and payload are in `bytes` (a batch's storage): `pathToken` is the token
    /// as `:path` carries it (lowercase), `inputToken` the token as given when that differs; a nil
    /// `payload` is the run's.
    init(row: Int, bytes: [UInt8], pathToken: Range<Int>, inputToken: Range<Int>? = nil, payload: Range<Int>?,
         headers: RowHeaders?) {
        self.row = row
        self.bytes = bytes
        pathStart = Int32(truncatingIfNeeded: pathToken.lowerBound)
        pathEnd = Int32(truncatingIfNeeded: pathToken.upperBound)
        inputStart = Int32(truncatingIfNeeded: (inputToken ?? pathToken).lowerBound)
        inputEnd = Int32(truncatingIfNeeded: (inputToken ?? pathToken).upperBound)
        payloadStart = payload.map { Int32(truncatingIfNeeded: $0.lowerBound) } ?? -1
        payloadEnd = payload.map { Int32(truncatingIfNeeded: $0.upperBound) } ?? -1
        heldHeaders = headers.map { Unmanaged.passRetained($0) }
    }

    /// This spent job (`SpentJobs.keep`: its bytes taken, its headers dropped) made the job of a new
    /// row, as `init(row:bytes:pathToken:payload:headers:)` makes one: every stored property set.
    /// Only for a spent job: the headers it held were released by `spend()`.
    func reuse(row: Int, bytes: consuming [UInt8], pathToken: Range<Int>, payload: Range<Int>?, headers: RowHeaders?) {
        self.row = row
        self.bytes = bytes
        pathStart = Int32(truncatingIfNeeded: pathToken.lowerBound)
        pathEnd = Int32(truncatingIfNeeded: pathToken.upperBound)
        inputStart = pathStart
        inputEnd = pathEnd
        payloadStart = payload.map { Int32(truncatingIfNeeded: $0.lowerBound) } ?? -1
        payloadEnd = payload.map { Int32(truncatingIfNeeded: $0.upperBound) } ?? -1
        heldHeaders = headers.map { Unmanaged.passRetained($0) }
        attempts = 0
        retriedAfterConnectionLoss = false
        avoidConnection = -1
        refusedTokenUpdate = false
        sentToken = nil
        group = 0
        lane = 0
        fallbackFrom = 0
        resentAfterUnrelatedKey = false
    }

    /// Ready for `JobPool`: holds no batch and no headers; false (unchanged) while its bytes are
    /// still its own (a job not ended through `takeDeviceToken()`).
    func spend() -> Bool {
        guard bytes.isEmpty else { return false }
        heldHeaders?.release()
        heldHeaders = nil
        return true
    }

    /// A job with bytes of its own: the token (and `lowercaseToken`, when it is not already lowercase)
    /// and the payload (nil: the run's) copied into one new buffer.
    convenience init(row: Int, deviceToken: ArraySlice<UInt8>, lowercaseToken: [UInt8]?, payload: ArraySlice<UInt8>?,
                     headers: RowHeaders?) {
        self.init(row: row, pathToken: lowercaseToken?[...] ?? deviceToken,
                  inputToken: lowercaseToken == nil ? nil : deviceToken, payload: payload, headers: headers)
    }

    private init(row: Int, pathToken: ArraySlice<UInt8>, inputToken: ArraySlice<UInt8>?, payload: ArraySlice<UInt8>?,
                 headers: RowHeaders?) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(pathToken.count + (inputToken?.count ?? 0) + (payload?.count ?? 0))
        bytes.append(contentsOf: pathToken)
        pathStart = 0
        pathEnd = Int32(truncatingIfNeeded: bytes.count)
        if let inputToken {
            inputStart = pathEnd
            bytes.append(contentsOf: inputToken)
            inputEnd = Int32(truncatingIfNeeded: bytes.count)
        } else {
            inputStart = pathStart
            inputEnd = pathEnd
        }
        if let payload {
            payloadStart = Int32(truncatingIfNeeded: bytes.count)
            bytes.append(contentsOf: payload)
            payloadEnd = Int32(truncatingIfNeeded: bytes.count)
        } else {
            payloadStart = -1
            payloadEnd = -1
        }
        self.row = row
        self.bytes = bytes
        heldHeaders = headers.map { Unmanaged.passRetained($0) }
    }

    /// Every stored property, the bytes copied: a property added to `Job` must be carried here too.
    private convenience init(copyingBytesOf job: Job) {
        self.init(row: job.row, pathToken: job.pathToken, inputToken: job.sharesPathToken ? nil : job.deviceToken,
                  payload: job.payloadIsInBytes ? job.bytes[job.payloadRange] : nil, headers: job.headers)
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

    deinit { heldHeaders?.release() }

    /// The token as it goes in `:path` (lowercase hex); usually the input's own bytes.
    var pathToken: ArraySlice<UInt8> { bytes[pathTokenRange] }

    /// Where `pathToken` is in `bytes`: read through `bytes`, borrowed, it costs no retain.
    var pathTokenRange: Range<Int> { Int(pathStart)..<Int(pathEnd) }

    /// The payload is in `bytes`, at `payloadRange` (not the run's).
    var payloadIsInBytes: Bool { payloadStart >= 0 }

    /// Where the payload is in `bytes`, when `payloadIsInBytes`.
    var payloadRange: Range<Int> { Int(payloadStart)..<Int(payloadEnd) }

    /// The input gave the token as `:path` carries it (already lowercase).
    private var sharesPathToken: Bool { inputStart == pathStart && inputEnd == pathEnd }

    /// Exactly as the input gave it, for the result log and the dead-token report.
    var deviceToken: ArraySlice<UInt8> { bytes[Int(inputStart)..<Int(inputEnd)] }

    /// `deviceToken`, the slice taking over this job's reference to `bytes`: for the record of a
    /// row that ends here, the job's last use (its bytes are gone after it). Making the record then
    /// costs the batch's storage no retain and dropping the job no release, two atomics a row on a
    /// count the reader and the other reactor threads change too.
    func takeDeviceToken() -> ArraySlice<UInt8> {
        var taken: [UInt8] = []
        swap(&taken, &bytes)
        return taken[Int(inputStart)..<Int(inputEnd)]
    }

    /// The notification's body: in `bytes`, or `runPayload` (the run's, which the caller holds).
    func payload(runPayload: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        payloadIsInBytes ? bytes[payloadRange] : runPayload
    }

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
