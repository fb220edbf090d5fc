/// A row's bytes as a `Job` carries them: the device token as `:path` carries it (lowercase) and as
/// the input gave it, the payload unless it is the run's, and the header fields unless they are
/// the run's.
///
/// Usually the token and payload are ranges of the storage of the CSV batch the row came from (no
/// copy per row); a row the decoder must rewrite (an uppercase token, a templated payload) and a
/// job waiting for a retry (`detached()`, so a long backoff never keeps a whole batch alive) hold a
/// buffer of their own, made by the one copy, `init(copying:lowercaseToken:payload:headers:)`.
///
/// Why this layout. A job is made on the reader thread and ends on a reactor thread, so anything
/// it references is retained on one thread and released on another: an atomic each (a few
/// instructions, ~20 cycles) on a cache line both threads change. Hence one buffer with 32-bit
/// offsets in it (a batch's storage stays below 2 GiB): one retain and one release of the batch
/// per row, not one per slice (with the one-buffer job swift_retain went from 18.7 to 11.7 calls a
/// row and swift_release from 35.1 to 26.1, callgrind, `benchmarks/profile`). The run's payload and
/// headers are not referenced (offset -1, nil) but lent by the workers, which hold them: a
/// reference to that one shared object was two atomics a row on a line every thread changes
/// (−170 instructions a row). The headers are held by hand (+1, released by `spend()` or when the
/// value goes), so that a reused job replaces them while the hot path borrows them
/// (`withHeaders`): a plain `var` is retained and released around each read. `takeDeviceToken()`
/// gives the job's reference to the row's record: no retain for the record, no release for the
/// job. Noncopyable, so the held headers are released exactly once. `Job`'s stored fields are
/// `@exclusivity(unchecked)`: only the thread holding a job touches it (hand-off queues order the
/// rest), and a checked class field costs a `swift_beginAccess` call per access (~120
/// instructions; the 40 a row of the checked build were +10.5 % of a row's instructions).
struct RowBytes: ~Copyable {
    /// The buffer `pathToken`, `deviceToken` and (unless it is the run's) the payload are ranges
    /// of. Changed only by `takeDeviceToken()`, the bytes' last use.
    private(set) var buffer: [UInt8]
    private var pathStart: Int32
    private var pathEnd: Int32
    /// `pathToken`'s range unless that one is a lowercased copy.
    private var inputStart: Int32
    private var inputEnd: Int32
    /// -1: the run's payload (`payload(runPayload:)`).
    private var payloadStart: Int32
    private var payloadEnd: Int32
    /// The row's own header values; nil for the run's (`RowDecoder.runDefaultHeaders`).
    private var heldHeaders: Unmanaged<RowHeaders>?

    /// A row whose token and payload are ranges of `buffer` (a batch's storage): `pathToken` the
    /// token as `:path` carries it (lowercase), `inputToken` the token as given when that differs;
    /// a nil `payload` is the run's, nil `headers` the run's.
    init(in buffer: consuming [UInt8], pathToken: Range<Int>, inputToken: Range<Int>? = nil, payload: Range<Int>?,
         headers: RowHeaders?) {
        self.buffer = buffer
        pathStart = Int32(truncatingIfNeeded: pathToken.lowerBound)
        pathEnd = Int32(truncatingIfNeeded: pathToken.upperBound)
        inputStart = Int32(truncatingIfNeeded: (inputToken ?? pathToken).lowerBound)
        inputEnd = Int32(truncatingIfNeeded: (inputToken ?? pathToken).upperBound)
        payloadStart = payload.map { Int32(truncatingIfNeeded: $0.lowerBound) } ?? -1
        payloadEnd = payload.map { Int32(truncatingIfNeeded: $0.upperBound) } ?? -1
        heldHeaders = headers.map { Unmanaged.passRetained($0) }
    }

    /// A row with a buffer of its own: the token as given, its lowercase form when it is not
    /// already lowercase (nil), and the payload (nil: the run's) copied into one new buffer.
    init(copying deviceToken: ArraySlice<UInt8>, lowercaseToken: ArraySlice<UInt8>?, payload: ArraySlice<UInt8>?,
         headers: RowHeaders?) {
        let pathToken = lowercaseToken ?? deviceToken
        var buffer: [UInt8] = []
        buffer.reserveCapacity(pathToken.count + (lowercaseToken == nil ? 0 : deviceToken.count) + (payload?.count ?? 0))
        buffer.append(contentsOf: pathToken)
        let path = 0..<buffer.count
        var input: Range<Int>?
        if lowercaseToken != nil {
            buffer.append(contentsOf: deviceToken)
            input = path.upperBound..<buffer.count
        }
        var payloadRange: Range<Int>?
        if let payload {
            let start = buffer.count
            buffer.append(contentsOf: payload)
            payloadRange = start..<buffer.count
        }
        self.init(in: buffer, pathToken: path, inputToken: input, payload: payloadRange, headers: headers)
    }

    deinit { heldHeaders?.release() }

    /// The same row with a buffer of its own, letting the batch go.
    func detached() -> RowBytes {
        RowBytes(copying: deviceToken, lowercaseToken: sharesPathToken ? nil : pathToken,
                 payload: payloadIsInBytes ? buffer[payloadRange] : nil, headers: headers)
    }

    /// The token as it goes in `:path` (lowercase hex); usually the input's own bytes.
    var pathToken: ArraySlice<UInt8> { buffer[pathTokenRange] }

    /// Where `pathToken` is in `buffer`: read through `buffer`, borrowed, it costs no retain.
    var pathTokenRange: Range<Int> { Int(pathStart)..<Int(pathEnd) }

    /// `body` with `pathToken`'s bytes, read in place.
    func withPathToken<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[pathTokenRange])) }
    }

    /// Exactly as the input gave it, for the result log and the dead-token report.
    var deviceToken: ArraySlice<UInt8> { buffer[inputTokenRange] }

    /// Where `deviceToken` is in `buffer`.
    var inputTokenRange: Range<Int> { Int(inputStart)..<Int(inputEnd) }

    /// The input gave the token as `:path` carries it (already lowercase).
    private var sharesPathToken: Bool { inputStart == pathStart && inputEnd == pathEnd }

    /// The payload is in `buffer`, at `payloadRange` (not the run's).
    var payloadIsInBytes: Bool { payloadStart >= 0 }

    /// Where the payload is in `buffer`, when `payloadIsInBytes`.
    var payloadRange: Range<Int> { Int(payloadStart)..<Int(payloadEnd) }

    /// The notification's body: in `buffer`, or `runPayload` (the run's, which the caller holds).
    func payload(runPayload: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        payloadIsInBytes ? buffer[payloadRange] : runPayload
    }

    /// The row's own headers; nil for the run's.
    var headers: RowHeaders? { heldHeaders?.takeUnretainedValue() }

    /// `body` with the row's own headers (nil: the run's), borrowed.
    @inline(__always)
    func withHeaders<Result>(_ body: (RowHeaders?) -> Result) -> Result {
        guard let heldHeaders else { return body(nil) }
        return heldHeaders._withUnsafeGuaranteedRef { body($0) }
    }

    /// `deviceToken`, the slice taking over the reference to `buffer`: for the record of a row that
    /// ends, the bytes' last use (the buffer is empty after it).
    mutating func takeDeviceToken() -> ArraySlice<UInt8> {
        var taken: [UInt8] = []
        swap(&taken, &buffer)
        return taken[Int(inputStart)..<Int(inputEnd)]
    }

    /// Lets the headers go once the buffer is taken (`takeDeviceToken()`), so that the job holds
    /// nothing while it waits to be reused; false (unchanged) while the buffer is still held.
    mutating func spend() -> Bool {
        guard buffer.isEmpty else { return false }
        heldHeaders?.release()
        heldHeaders = nil
        return true
    }
}
