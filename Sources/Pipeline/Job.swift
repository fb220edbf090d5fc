import APNs

/// One row on its way through the sender: where its bytes are, its headers, and what happened to
/// it so far.
///
/// The token and payload are slices of the CSV batch the row came from (no copy per row); the
/// headers are the run's shared `RowHeaders` unless the row has its own. A job waiting for a retry
/// copies its bytes out (`detach()`), so a long backoff never keeps a whole batch alive.
///
/// A job is in exactly one place at a time — the work queue, a worker's ready list, a retry
/// timer, a connection's in-flight table — and only the thread holding it touches it; it moves
/// between threads only through `HandOffQueue`s.
final class Job: @unchecked Sendable {
    let row: Int
    /// Exactly as the input gave it, for the result log and the dead-token report.
    private(set) var deviceToken: ArraySlice<UInt8>
    /// The token as it goes in `:path` (lowercase hex); nil when that is `deviceToken` itself.
    private(set) var lowercaseToken: [UInt8]?
    private(set) var payload: ArraySlice<UInt8>
    let headers: RowHeaders
    /// Requests sent that APNs may have processed (not counting refused or unprocessed streams).
    var attempts = 0
    var retriedAfterConnectionLoss = false
    /// The connection a retry should avoid (500/503), or -1.
    var avoidConnection = -1
    /// The provider token the latest request carried, to refresh only if it is still current.
    /// Shared by reference: remembering it costs a row one retain, not a copy of four strings.
    var sentToken: SentProviderToken?

    init(row: Int, deviceToken: ArraySlice<UInt8>, lowercaseToken: [UInt8]?, payload: ArraySlice<UInt8>,
         headers: RowHeaders) {
        self.row = row
        self.deviceToken = deviceToken
        self.lowercaseToken = lowercaseToken
        self.payload = payload
        self.headers = headers
    }

    /// The `:path` after `/3/device/`.
    var pathToken: ArraySlice<UInt8> { lowercaseToken.map { $0[...] } ?? deviceToken }

    /// Copies the token and payload into storage of their own, letting the CSV batch go.
    func detach() {
        deviceToken = Array(deviceToken)[...]
        payload = Array(payload)[...]
    }

    /// The record for a row that ends without (another) answer from APNs.
    func record(_ outcome: Outcome, reason: String?) -> RowResult {
        RowResult(row: row, deviceToken: deviceToken, outcome: outcome, reason: reason, attempts: attempts,
                  retriedAfterConnectionLoss: retriedAfterConnectionLoss)
    }
}

/// A provider token as the requests that carried it remember it (see `Job.sentToken`).
final class SentProviderToken: Sendable {
    let token: ProviderToken

    init(_ token: ProviderToken) { self.token = token }
}
