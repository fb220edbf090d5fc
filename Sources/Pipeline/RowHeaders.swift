import APNs
import Transport

/// The checked `apns-*` values of rows, and the header fields they become: one instance for the
/// run's values (`--topic`, `--push-type`, ...), held by the decoder and the workers, and one per
/// row only for rows with columns of their own. Immutable.
final class RowHeaders: Sendable {
    let values: NotificationHeaders
    /// `apns-topic`, `apns-push-type`, ... with Apple's HPACK rule for each (no `authorization`).
    let fields: [H2Header]

    init(_ values: NotificationHeaders) {
        self.values = values
        pushType = values.pushType
        expiration = values.expiration
        fields = values.fields.map { H2Header($0.name, $0.value) }
    }

    /// Copied out of `values`, read for every row: reading a field through `values` would copy the
    /// whole struct (its strings retained and released).
    let pushType: PushType
    let expiration: Int64?
}
