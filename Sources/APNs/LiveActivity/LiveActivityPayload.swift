/// An ActivityKit push payload (`apns-push-type: liveactivity`) as its `aps` dictionary tells it,
/// and the rules of Apple's ActivityKit pages that can be checked before sending: APNs takes a
/// payload that breaks them (200), and the device drops it, so a sender checks them itself.
///
/// - `aps.event` is `start`, `update` or `end`;
/// - a start needs `attributes-type` (a string), `attributes` (an object) and `alert`;
/// - `input-push-channel` belongs on a start only (it subscribes the new activity to a channel);
/// - an update or an end carries `timestamp` (UNIX seconds), by which ActivityKit orders them;
/// - a broadcast (a channel's push) cannot start an activity.
///
/// Read from the bytes in place (`JSONMembers`), for a payload `JSONValidator` accepted, or in the
/// validator's own pass (`LiveActivityScan`, for `send`'s rows); nothing
/// else of it is checked (`content-state` is the app's to decode). A key given twice counts as
/// given last, and a `null` value as not given, as a decoder reads them.
public struct LiveActivityPayload: Sendable, Hashable {
    /// `aps.event`.
    public enum Event: String, Sendable, Hashable, CaseIterable {
        case start, update, end
    }

    /// How the payload reaches devices: to a device token (`send`: an activity's update token, or a
    /// push-to-start token for a start) or to every device that listens on a channel (a broadcast).
    public enum Route: Sendable, Hashable {
        case deviceToken, broadcast
    }

    /// A rule a payload breaks; its `detail` is the rejected row's detail (reason `InvalidPayload`).
    public enum Rule: UInt8, Sendable, Hashable, CaseIterable {
        case apsObject
        case event
        case broadcastCannotStart
        case startNeedsAttributesType
        case startNeedsAttributes
        case startNeedsAlert
        case inputPushChannelOnlyOnStart
        case timestamp

        /// What the rule is, naming the keys, as one line.
        public var detail: String {
            switch self {
            case .apsObject:
                "Live Activity payload has no \"aps\" object (it holds event, timestamp and content-state)"
            case .event:
                "Live Activity payload's aps.event must be \"start\", \"update\" or \"end\""
            case .broadcastCannotStart:
                "a broadcast cannot start a Live Activity (aps.event \"start\"): send the start to push-to-start "
                    + "tokens, with aps.input-push-channel naming the channel"
            case .startNeedsAttributesType:
                "a Live Activity start needs aps.attributes-type, the name of the app's ActivityAttributes type (a string)"
            case .startNeedsAttributes:
                "a Live Activity start needs aps.attributes, the activity's attributes (an object)"
            case .startNeedsAlert:
                "a Live Activity start needs aps.alert (a string, or an object with title and body)"
            case .inputPushChannelOnlyOnStart:
                "aps.input-push-channel belongs on a Live Activity start only (aps.event \"start\"), not on an update or end"
            case .timestamp:
                "a Live Activity update or end needs aps.timestamp, the time it was sent in UNIX seconds (a number)"
            }
        }
    }

    /// The keys of `aps` the rules read, present with a value of their kind.
    struct Keys: OptionSet, Sendable, Hashable {
        let rawValue: UInt8
        static let timestamp = Keys(rawValue: 1 << 0)
        static let attributesType = Keys(rawValue: 1 << 1)
        static let attributes = Keys(rawValue: 1 << 2)
        static let alert = Keys(rawValue: 1 << 3)
        static let inputPushChannel = Keys(rawValue: 1 << 4)
    }

    /// Whether the payload has an `aps` object.
    public internal(set) var hasAPS = false
    /// `aps.event`; nil when it is absent or none of the three.
    public internal(set) var event: Event?
    var keys: Keys = []

    /// The payload `json`, a JSON object (`JSONValidator`), as its `aps` tells it.
    public init(json: some Collection<UInt8>) {
        if let read = json.withContiguousStorageIfAvailable({ Self(buffer: $0) }) {
            self = read
        } else {
            self = Array(json).withUnsafeBufferPointer { Self(buffer: $0) }
        }
    }

    /// `init(json:)` over bytes in place (a CSV batch's field). One walk: `aps` is read member by
    /// member where the top-level object meets it, and every other value is skipped, so each byte
    /// is read once. A later `aps` replaces an earlier one; an `aps` the bytes cut is none.
    public init(buffer: UnsafeBufferPointer<UInt8>) {
        let members = JSONMembers(bytes: buffer)
        guard let top = members.topLevelObject else { return }
        _ = members.walkObject(at: top) { member in
            guard members.string(member.key, escaped: member.keyIsEscaped, equals: "aps") else { return nil }
            self = Self()
            guard member.kind == .object else { return nil }
            let end = members.walkObject(at: member.valueStart) { self.read($0, members) }
            if end != nil { hasAPS = true } else { self = Self() }
            return end ?? buffer.count + 1
        }
    }

    /// A payload with no `aps`.
    init() {}

    /// The first rule the payload breaks when sent by `route`, or nil when it keeps them all.
    public func brokenRule(route: Route) -> Rule? {
        guard hasAPS else { return .apsObject }
        guard let event else { return .event }
        switch event {
        case .start:
            if route == .broadcast { return .broadcastCannotStart }
            if !keys.contains(.attributesType) { return .startNeedsAttributesType }
            if !keys.contains(.attributes) { return .startNeedsAttributes }
            if !keys.contains(.alert) { return .startNeedsAlert }
        case .update, .end:
            if keys.contains(.inputPushChannel) { return .inputPushChannelOnlyOnStart }
            if !keys.contains(.timestamp) { return .timestamp }
        }
        return nil
    }

    /// `brokenRule(route:)` as a rejection: `InvalidPayload`, the rule its detail.
    public func rejection(route: Route) -> Rejection? {
        brokenRule(route: route).map { Rejection(.invalidPayload, $0.detail) }
    }

    /// One member of `aps`: the event, or a key the rules read (a later one of a name replaces an
    /// earlier). Returns past the event's string, which it reads; other values are left to skip.
    @inline(__always)
    private mutating func read(_ member: JSONMember, _ members: JSONMembers) -> Int? {
        guard let name = members.withText(member.key, escaped: member.keyIsEscaped, Member.named) ?? nil else { return nil }
        note(name, kind: member.kind)
        guard name == .event && member.kind == .string else { return nil }
        let text = members.string(at: member.valueStart)
        event = members.withText(text.text, escaped: text.escaped, Event.named) ?? nil
        return text.end
    }

    /// `member` of `aps` given with a value of `kind`: the key it gives or takes back (a later one of
    /// a name replaces an earlier). An event is cleared here; its string, if any, is the caller's to read.
    @inline(__always)
    mutating func note(_ member: Member, kind: JSONValueKind) {
        switch member {
        case .event:
            event = nil
        case .timestamp:
            keys.set(.timestamp, kind == .number)
        case .attributesType:
            keys.set(.attributesType, kind == .string)
        case .attributes:
            keys.set(.attributes, kind == .object)
        case .alert:
            keys.set(.alert, kind == .string || kind == .object)
        case .inputPushChannel:
            keys.set(.inputPushChannel, kind != .null)
        }
    }

    /// The members of `aps` the rules read.
    enum Member {
        case event, timestamp, attributesType, attributes, alert, inputPushChannel

        /// The member whose key is `text`, or nil: the key's length picks the one name to compare.
        @inline(__always)
        static func named(_ text: UnsafeBufferPointer<UInt8>) -> Member? {
            let member: Member
            switch text.count {
            case 5: member = text[0] == UInt8(ascii: "e") ? .event : .alert
            case 9: member = .timestamp
            case 10: member = .attributes
            case 15: member = .attributesType
            case 18: member = .inputPushChannel
            default: return nil
            }
            return JSONMembers.equal(text, member.name) ? member : nil
        }

        var name: StaticString {
            switch self {
            case .event: "event"
            case .timestamp: "timestamp"
            case .attributesType: "attributes-type"
            case .attributes: "attributes"
            case .alert: "alert"
            case .inputPushChannel: "input-push-channel"
            }
        }
    }
}

extension LiveActivityPayload.Event {
    /// The event whose text is `text`, or nil: its length picks the one name to compare.
    @inline(__always)
    static func named(_ text: UnsafeBufferPointer<UInt8>) -> Self? {
        let event: Self
        switch text.count {
        case 5: event = .start
        case 6: event = .update
        case 3: event = .end
        default: return nil
        }
        return JSONMembers.equal(text, event.name) ? event : nil
    }

    /// The event's text, as a static string for comparing bytes in place.
    var name: StaticString {
        switch self {
        case .start: "start"
        case .update: "update"
        case .end: "end"
        }
    }
}

extension LiveActivityPayload.Keys {
    mutating func set(_ key: Self, _ present: Bool) {
        if present { insert(key) } else { remove(key) }
    }
}
