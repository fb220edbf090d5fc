/// Why a notification is not sent: the reason APNs would answer (or this project's
/// `invalidPayload`) and a detail naming the value at fault, for the results log.
public struct Rejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// The reason APNs would answer: the result log's `reason`.
    public let reason: Reason
    /// What is wrong and with which value, e.g. `priority "7" is not 10, 5 or 1`.
    public let detail: String

    /// A rejection for `reason`, `detail` naming the value at fault.
    public init(_ reason: Reason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    /// `Reason: detail`, one line.
    public var description: String { "\(reason.name): \(detail)" }
}
