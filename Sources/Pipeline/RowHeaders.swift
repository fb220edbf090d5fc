import APNs
import Transport

/// The checked `apns-*` values of rows, and the header fields they become: one instance shared by
/// every row that uses the run's values (`--topic`, `--push-type`, ...), one per row only for rows
/// with columns of their own. Immutable.
final class RowHeaders: Sendable {
    let values: NotificationHeaders
    /// `apns-topic`, `apns-push-type`, ... with Apple's HPACK rule for each (no `authorization`).
    let fields: [H2Header]
    /// The run's values, shared by every row without header columns of its own: a sender may encode
    /// them once (`H2RequestTemplate`).
    let isRunDefault: Bool

    init(_ values: NotificationHeaders, isRunDefault: Bool = false) {
        self.values = values
        self.isRunDefault = isRunDefault
        pushType = values.pushType
        expiration = values.expiration
        fields = values.fields.map { H2Header($0.name, $0.value) }
    }

    /// Copied out of `values`, read for every row: reading a field through `values` would copy the
    /// whole struct (its strings retained and released).
    let pushType: PushType
    let expiration: Int64?
}
