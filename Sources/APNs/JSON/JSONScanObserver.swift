/// What `JSONScanner` tells as it reads, for a caller that wants something of the payload in the
/// validator's own pass instead of a second walk (`LiveActivityScan`). Every hook is inlined into
/// the scanner's specialization: with `NoJSONObserver` they compile away, so a payload nobody
/// watches is read by the same code as before. Offsets index the scanned bytes; `depth` counts
/// the containers open around the token (the top-level object's members are at depth 1).
protocol JSONScanObserver {
    /// The string being read holds an escape (`\`): called at each, before the string's own hook.
    mutating func escape()
    /// A key was read: its text is `start..<end` (without quotes).
    mutating func key(from start: Int, to end: Int, depth: Int)
    /// A value of `kind` other than a string starts (before it is read).
    mutating func value(_ kind: JSONValueKind, depth: Int)
    /// A string value was read: its text is `start..<end` (without quotes).
    mutating func string(from start: Int, to end: Int, depth: Int)
}

/// The observer of a payload nobody watches: every hook empty.
struct NoJSONObserver: JSONScanObserver {
    @inline(__always) mutating func escape() {}
    @inline(__always) mutating func key(from start: Int, to end: Int, depth: Int) {}
    @inline(__always) mutating func value(_ kind: JSONValueKind, depth: Int) {}
    @inline(__always) mutating func string(from start: Int, to end: Int, depth: Int) {}
}
