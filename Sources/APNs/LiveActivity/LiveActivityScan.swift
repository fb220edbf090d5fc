/// `LiveActivityPayload(buffer:)` read during `JSONValidator`'s own pass over a `liveactivity`
/// row's payload (a `JSONScanObserver`), so the rules cost no second walk: it notes the top-level
/// `aps` and the members of that object alone, as the walk reads them. A later `aps` replaces an
/// earlier one, a key given twice counts as given last, `null` as not given, a non-object `aps` is
/// none, and escaped keys and events are read as their text. What it holds means something only
/// when the validator accepted the bytes.
struct LiveActivityScan: JSONScanObserver {
    /// The scanned bytes' start (nil only for no bytes, where no hook is called).
    private let base: UnsafePointer<UInt8>?
    /// The payload as read so far.
    private(set) var payload = LiveActivityPayload()
    /// Whether the last top-level key was `aps`.
    private var apsKey = false
    /// Whether the scan is inside the top-level `aps` object, whose members are at depth 2.
    private var inAPS = false
    /// The member of `aps` whose value comes next; nil for one the rules do not read.
    private var member: LiveActivityPayload.Member?
    /// Whether the string just read holds an escape (every string ends in `key` or `string`, which
    /// clear it, and escapes come only inside strings).
    private var escaped = false

    init(bytes: UnsafeBufferPointer<UInt8>) {
        base = bytes.baseAddress
    }

    // Every top-level value follows its key, which set `apsKey`; every value in `aps` follows its
    // key, which set `member`. Depth 2 is tested first: most of a payload is inside `aps`.

    @inline(__always)
    mutating func escape() {
        escaped = true
    }

    @inline(__always)
    mutating func key(from start: Int, to end: Int, depth: Int) {
        let escaped = self.escaped
        self.escaped = false
        if depth == 2 {
            guard inAPS else { return }
            member = text(start, end, escaped, LiveActivityPayload.Member.named) ?? nil
        } else if depth == 1 {
            inAPS = false
            apsKey = text(start, end, escaped) { JSONMembers.equal($0, "aps") } ?? false
        }
    }

    @inline(__always)
    mutating func value(_ kind: JSONValueKind, depth: Int) {
        if depth == 2 {
            guard inAPS, let member else { return }
            payload.note(member, kind: kind)
        } else if depth == 1 && apsKey {
            inAPS = kind == .object
            payload = LiveActivityPayload()
            payload.hasAPS = inAPS
        }
    }

    @inline(__always)
    mutating func string(from start: Int, to end: Int, depth: Int) {
        let escaped = self.escaped
        self.escaped = false
        if depth == 2 {
            guard inAPS, let member else { return }
            payload.note(member, kind: .string)
            guard member == .event else { return }
            payload.event = text(start, end, escaped, LiveActivityPayload.Event.named) ?? nil
        } else if depth == 1 && apsKey {
            inAPS = false
            payload = LiveActivityPayload()
        }
    }

    /// `body` called with the text at `start..<end`: the bytes in place, or for an `escaped` one its
    /// escapes decoded (an allocation, rare); nil for a broken escape.
    @inline(__always)
    private func text<Result>(_ start: Int, _ end: Int, _ escaped: Bool,
                              _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result? {
        let raw = UnsafeBufferPointer(start: base.unsafelyUnwrapped + start, count: end &- start)
        guard escaped else { return body(raw) }
        return JSONStringText.decode(raw)?.withUnsafeBufferPointer(body)
    }
}

extension LiveActivityPayload {
    /// The payload `buffer` as `init(buffer:)` reads it, validated in the same pass: nil when the
    /// bytes are not one JSON object (`JSONValidator`). One walk where validating and then reading
    /// would take two.
    public init?(validating buffer: UnsafeBufferPointer<UInt8>) {
        var scan = LiveActivityScan(bytes: buffer)
        guard JSONValidator.validate(buffer: buffer, observing: &scan) == nil else { return nil }
        self = scan.payload
    }
}
