/// `LiveActivityPayload(buffer:)` read during `JSONValidator`'s own pass over a `liveactivity`
/// row's payload (a `JSONScanObserver`), so the rules cost no second walk: it notes the top-level
/// `aps` and the members of that object alone, as the walk reads them. A later `aps` replaces an
/// earlier one, a key given twice counts as given last, `null` as not given, a non-object `aps` is
/// none, and escaped keys and events are read as their text. What it holds means something only
/// when the validator accepted the bytes.
struct LiveActivityScan: JSONScanObserver {
    let members: JSONMembers
    /// The payload as read so far.
    private(set) var payload = LiveActivityPayload()
    /// Whether the last top-level key was `aps`.
    private var apsKey = false
    /// Whether the scan is inside the top-level `aps` object, whose members are at depth 2.
    private var inAPS = false
    /// The member of `aps` whose value comes next; nil for one the rules do not read.
    private var member: LiveActivityPayload.Member?

    init(bytes: UnsafeBufferPointer<UInt8>) {
        members = JSONMembers(bytes: bytes)
    }

    @inline(__always)
    mutating func key(from start: Int, to end: Int, escaped: Bool, depth: Int) {
        if depth == 1 {
            inAPS = false
            apsKey = members.withText(start..<end, escaped: escaped) { JSONMembers.equal($0, "aps") } ?? false
        } else if depth == 2 && inAPS {
            member = members.withText(start..<end, escaped: escaped, LiveActivityPayload.Member.named) ?? nil
        }
    }

    @inline(__always)
    mutating func value(_ first: UInt8, depth: Int) {
        if depth == 1 {
            // Every top-level value follows its key, which set `apsKey`.
            guard apsKey else { return }
            inAPS = first == UInt8(ascii: "{")
            payload = LiveActivityPayload()
            payload.hasAPS = inAPS
        } else if depth == 2 && inAPS, let member, let kind = JSONMembers.kind(of: first) {
            payload.note(member, kind: kind)
        }
    }

    @inline(__always)
    mutating func string(from start: Int, to end: Int, escaped: Bool, depth: Int) {
        guard depth == 2 && inAPS && member == .event else { return }
        payload.event = members.withText(start..<end, escaped: escaped, LiveActivityPayload.Event.named) ?? nil
    }
}
