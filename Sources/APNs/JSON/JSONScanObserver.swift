/// What `JSONScanner` tells as it reads, for a caller that wants something of the payload in the
/// validator's own pass instead of a second walk (`LiveActivityScan`). Every hook is inlined into
/// the scanner's specialization: with `NoJSONObserver` they compile away, so a payload nobody
/// watches is read by the same code as before. Offsets index the scanned bytes; `depth` counts
/// the containers open around the token (the top-level object's members are at depth 1).
protocol JSONScanObserver {
    /// A key was read: its text is `start..<end` (without quotes), `escaped` when it holds a `\`.
    mutating func key(from start: Int, to end: Int, escaped: Bool, depth: Int)
    /// A value whose first byte is `first` starts (before it is read).
    mutating func value(_ first: UInt8, depth: Int)
    /// A string value was read: its text is `start..<end` (without quotes).
    mutating func string(from start: Int, to end: Int, escaped: Bool, depth: Int)
}

/// The observer of a payload nobody watches: every hook empty.
struct NoJSONObserver: JSONScanObserver {
    @inline(__always) mutating func key(from start: Int, to end: Int, escaped: Bool, depth: Int) {}
    @inline(__always) mutating func value(_ first: UInt8, depth: Int) {}
    @inline(__always) mutating func string(from start: Int, to end: Int, escaped: Bool, depth: Int) {}
}
