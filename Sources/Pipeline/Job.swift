import APNs

/// One row on its way through the sender: the notification, and what happened to it so far.
///
/// A job is in exactly one place at a time — the work queue, a worker's ready list, a retry
/// timer, a connection's in-flight table — and only the thread holding it touches it; it moves
/// between threads only through `HandOffQueue`s.
final class Job: @unchecked Sendable {
    let row: Int
    /// Exactly as the input gave it, for the result log and the dead-token report.
    let deviceTokenText: String
    let notification: Notification
    let path: String
    /// Requests sent that APNs may have processed (not counting refused or unprocessed streams).
    var attempts = 0
    var retriedAfterConnectionLoss = false
    /// Monotonic time of the latest submit, in nanoseconds.
    var submittedAt: UInt64 = 0
    /// The connection a retry should avoid (500/503), or -1.
    var avoidConnection = -1
    /// The provider token the latest request carried, to refresh only if it is still current.
    var providerToken: ProviderToken?

    init(row: Int, deviceTokenText: String, notification: Notification) {
        self.row = row
        self.deviceTokenText = deviceTokenText
        self.notification = notification
        self.path = notification.deviceToken.path
    }

    /// The record for a row that ends without (another) answer from APNs.
    func record(_ outcome: Outcome, reason: String?) -> ResultRecord {
        ResultRecord(row: row, deviceToken: deviceTokenText, outcome: outcome, reason: reason, attempts: attempts,
                     retriedAfterConnectionLoss: retriedAfterConnectionLoss)
    }
}
