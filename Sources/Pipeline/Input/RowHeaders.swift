import APNs
import Transport

/// The checked `apns-*` values of rows, and the header fields they become: one instance for the
/// run's values (`--topic`, `--push-type`, ...), held by the decoder and the workers, and one per
/// row only for rows with columns of their own. Immutable.
final class RowHeaders: Sendable {
    /// The header columns a row gives itself (the run's value fills the others).
    struct Columns: OptionSet, Sendable {
        let rawValue: UInt8
        init(rawValue: UInt8) { self.rawValue = rawValue }
        static let topic = Columns(rawValue: 1)
        static let pushType = Columns(rawValue: 2)
        static let priority = Columns(rawValue: 4)
        static let expiration = Columns(rawValue: 8)

        /// The flag that gives the run's value of this column.
        var flag: String {
            switch self {
            case .topic: "--topic"
            case .pushType: "--push-type"
            case .priority: "--priority"
            default: "--expiration"
            }
        }

        /// The CSV column that gives a row's own value.
        var csvColumn: String {
            switch self {
            case .topic: "topic"
            case .pushType: "push_type"
            case .priority: "priority"
            default: "expiration"
            }
        }

        /// The column whose value APNs refused with `reason` (a run-level misconfiguration).
        init?(refusedBy reason: Reason) {
            switch reason {
            case .badTopic, .topicDisallowed, .missingTopic: self = .topic
            case .invalidPushType: self = .pushType
            case .badPriority: self = .priority
            case .badExpirationDate: self = .expiration
            default: return nil
            }
        }
    }

    let values: NotificationHeaders
    /// The row's own columns; empty for the run's headers.
    let own: Columns
    /// `apns-topic`, `apns-push-type`, ... with Apple's HPACK rule for each (no `authorization`).
    let fields: [H2Header]

    init(_ values: NotificationHeaders, own: Columns = []) {
        self.values = values
        self.own = own
        pushType = values.pushType
        expiration = values.expiration
        fields = values.fields.map { H2Header($0.name, $0.value, rules: .apple) }
        extendsRun = false
        inputTokenField = nil
    }

    /// A broadcast row's headers (`BroadcastRowDecoder`): `fields` as given, `apns-channel-id` among
    /// them, and every value the row's own, so that APNs' refusal of one fails that row (a channel's
    /// storage policy decides whether its expiration is accepted) and never stops the run.
    /// `extendsRun`: `fields` go after the run's (the row has no priority or expiration of its own).
    /// `inputTokenField`: see the property.
    init(broadcast fields: [H2Header], expiration: Int64, values: NotificationHeaders, extendsRun: Bool,
         inputTokenField: String? = nil) {
        self.values = values
        own = [.topic, .pushType, .priority, .expiration]
        pushType = .liveactivity
        self.expiration = expiration
        self.fields = fields
        self.extendsRun = extendsRun
        self.inputTokenField = inputTokenField
    }

    /// The request carries the run's header fields and then `fields` (a broadcast row's channel),
    /// rather than `fields` alone.
    let extendsRun: Bool

    /// The header field whose value is the row's input token, sent from the row's bytes after the
    /// run's fields (`extendsRun`): a usual broadcast row's `apns-channel-id`, so that its rows
    /// share one `RowHeaders` and one encoded header block (`RequestTemplates`). Nil: none.
    let inputTokenField: String?

    /// Copied out of `values`, read for every row: reading a field through `values` would copy the
    /// whole struct (its strings retained and released).
    let pushType: PushType
    let expiration: Int64?

    /// The run-wide column APNs refused with `reason` in a row with these headers (`--topic`,
    /// `--push-type`, ...): a run-level misconfiguration. Nil for any other answer, and when the
    /// refused value is the row's own column, which fails that row only.
    static func runWideRefusal(_ reason: Reason?, of headers: RowHeaders?) -> Columns? {
        guard let reason, let column = Columns(refusedBy: reason) else { return nil }
        if let headers, headers.own.contains(column) { return nil }
        return column
    }
}
