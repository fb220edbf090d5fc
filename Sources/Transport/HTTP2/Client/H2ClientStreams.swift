import ByteScan
/// The client session's requests in flight, found in O(1) from nghttp2's stream user data.
///
/// Slot `i` holds three things, none of them optional (an optional record made every field access
/// compute the enum's tag through an outlined generic function, ~15 instructions each, ten a request):
/// - the stream's state (`H2ClientSession.Stream`), always initialized: a free slot keeps a blank
///   one, so a request writes its few fields instead of moving a 200-byte record in and out (two
///   memcpy calls each way);
/// - its references (the body and the template), initialized only while the slot is taken, so
///   they are released when the stream ends;
/// - the `:path` value nghttp2 reads uncopied when it encodes the HEADERS frame (`pathStride` bytes).
///
/// Whether a slot is taken is read from its id: 0 free, `pending` taken before nghttp2 gave the
/// stream its id, else the id. `index(of:userData:)` checks it, so a stale index never reaches a
/// new stream. Owned by its session's thread.
final class H2ClientStreams {
    struct References {
        var body: ArraySlice<UInt8>
        /// nghttp2 reads the template's bytes (uncopied) when it encodes the HEADERS frame.
        var template: H2RequestTemplate?
    }

    static let pending: Int32 = -1
    /// A `:path` longer than this is copied by nghttp2 instead (a device token is 64 hex digits).
    static let pathStride = 128

    @exclusivity(unchecked) private var states: UnsafeMutablePointer<H2ClientSession.Stream>
    @exclusivity(unchecked) private var references: UnsafeMutablePointer<References>
    @exclusivity(unchecked) private var ids: UnsafeMutablePointer<Int32>
    /// `:path` storage in chunks of `chunkSlots` slots that never move: nghttp2 may still hold
    /// pointers into them when the table grows.
    @exclusivity(unchecked) private var pathChunks: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>>
    /// Recent stream ids and their slots: entry `(id >> 1) & recentMask` holds `id << 32 | index`
    /// (client stream ids are odd and rise by two). An entry written over by a later stream sends
    /// the look-up to nghttp2's user data instead.
    @exclusivity(unchecked) private var recent: UnsafeMutablePointer<UInt64>
    private static let recentMask = 2047
    /// A stack of free slot indices.
    @exclusivity(unchecked) private var freeIndices: UnsafeMutablePointer<Int>
    @exclusivity(unchecked) private var freeCount = 0
    @exclusivity(unchecked) private var capacity: Int
    /// Slots made so far (each with a state; taken or free).
    @exclusivity(unchecked) private(set) var slots = 0
    @exclusivity(unchecked) private(set) var count = 0

    private static let chunkSlots = 64

    init(capacity: Int = 64) {
        let capacity = max(1, (capacity + Self.chunkSlots - 1) / Self.chunkSlots) * Self.chunkSlots
        self.capacity = capacity
        states = .allocate(capacity: capacity)
        references = .allocate(capacity: capacity)
        ids = .allocate(capacity: capacity)
        freeIndices = .allocate(capacity: capacity)
        recent = .allocate(capacity: Self.recentMask + 1)
        recent.initialize(repeating: 0, count: Self.recentMask + 1)
        pathChunks = .allocate(capacity: capacity / Self.chunkSlots)
        for chunk in 0..<capacity / Self.chunkSlots {
            (pathChunks + chunk).initialize(to: .allocate(capacity: Self.chunkSlots * Self.pathStride))
        }
    }

    deinit {
        for index in 0..<slots where ids[index] != 0 { (references + index).deinitialize(count: 1) }
        states.deinitialize(count: slots)
        states.deallocate()
        references.deallocate()
        ids.deallocate()
        for chunk in 0..<capacity / Self.chunkSlots { pathChunks[chunk].deallocate() }
        pathChunks.deallocate()
        freeIndices.deallocate()
        recent.deallocate()
    }

    /// Takes a slot for a new request; its references follow with `keep` (before anything may
    /// remove it), its stream id with `setStreamID`.
    func insert(tag: UInt64, submittedAt: UInt64) -> Int {
        let index: Int
        if freeCount > 0 {
            freeCount &-= 1
            index = freeIndices[freeCount]
        } else {
            if slots == capacity { grow() }
            index = slots
            (states + index).initialize(to: H2ClientSession.Stream())
            slots &+= 1
        }
        count &+= 1
        ids[index] = Self.pending
        states[index].tag = tag
        states[index].submittedAt = submittedAt
        return index
    }

    /// The references of the request just inserted at `index`.
    func keep(body: consuming ArraySlice<UInt8>, template: consuming H2RequestTemplate?, at index: Int) {
        // The slice's storage is immutable while shared and kept alive by the slot's reference:
        // its address stays valid until `remove`.
        let (base, bodyCount) = body.withUnsafeBufferPointer { ($0.baseAddress, $0.count) }
        states[index].bodyBase = base
        states[index].bodyCount = bodyCount
        (references + index).initialize(to: References(body: body, template: template))
    }

    private func grow() {
        let larger = capacity * 2
        states = Self.moved(states, count: slots, capacity: larger)
        references = Self.moved(references, count: slots, capacity: larger)
        ids = Self.moved(ids, count: slots, capacity: larger)
        freeIndices = Self.moved(freeIndices, count: freeCount, capacity: larger)
        pathChunks = Self.moved(pathChunks, count: capacity / Self.chunkSlots, capacity: larger / Self.chunkSlots)
        for chunk in capacity / Self.chunkSlots..<larger / Self.chunkSlots {
            (pathChunks + chunk).initialize(to: .allocate(capacity: Self.chunkSlots * Self.pathStride))
        }
        capacity = larger
    }

    private static func moved<Value>(_ old: UnsafeMutablePointer<Value>, count: Int,
                                     capacity: Int) -> UnsafeMutablePointer<Value> {
        let new = UnsafeMutablePointer<Value>.allocate(capacity: capacity)
        new.moveInitialize(from: old, count: count)
        old.deallocate()
        return new
    }

    func setStreamID(_ streamID: Int32, at index: Int) {
        ids[index] = streamID
        states[index].streamID = streamID
        recent[Int(streamID >> 1) & Self.recentMask] = UInt64(UInt32(bitPattern: streamID)) << 32 | UInt64(index)
    }

    /// The slot of `streamID`, if the map of recent ids still knows it (nil: ask nghttp2).
    @inline(__always)
    func recentIndex(of streamID: Int32) -> Int? {
        let entry = recent[Int(streamID >> 1) & Self.recentMask]
        let index = Int(truncatingIfNeeded: entry & 0xFFFF_FFFF)
        return entry >> 32 == UInt64(UInt32(bitPattern: streamID)) && holds(index, streamID) ? index : nil
    }

    /// The index of `streamID`'s slot, from the user data nghttp2 keeps for the stream.
    @inline(__always)
    func index(of streamID: Int32, userData: UnsafeMutableRawPointer?) -> Int? {
        let index = Self.index(from: userData)
        return holds(index, streamID) ? index : nil
    }

    /// Whether `index` holds `streamID`'s request now (stream ids are never reused on a session).
    @inline(__always)
    func holds(_ index: Int, _ streamID: Int32) -> Bool {
        UInt(bitPattern: index) < UInt(bitPattern: slots) && streamID > 0 && ids[index] == streamID
    }

    /// The state at `index`, in place. A free slot reads as a blank (or ended) stream.
    subscript(index: Int) -> H2ClientSession.Stream {
        unsafeAddress {
            precondition(UInt(bitPattern: index) < UInt(bitPattern: slots), "H2ClientStreams: index out of range")
            return UnsafePointer(states + index)
        }
        unsafeMutableAddress {
            precondition(UInt(bitPattern: index) < UInt(bitPattern: slots), "H2ClientStreams: index out of range")
            return states + index
        }
    }

    /// The state at `index` (see the subscript), for a callback that touches several fields.
    @inline(__always)
    func state(at index: Int) -> UnsafeMutablePointer<H2ClientSession.Stream> {
        precondition(UInt(bitPattern: index) < UInt(bitPattern: slots), "H2ClientStreams: index out of range")
        return states + index
    }

    /// Where slot `index` keeps its `:path` bytes (`pathStride` of them).
    func path(at index: Int) -> UnsafeMutablePointer<UInt8> {
        pathChunks[index / Self.chunkSlots] + (index % Self.chunkSlots) &* Self.pathStride
    }

    /// A slot's index as nghttp2 keeps it for the stream (`index + 1` as a pointer bit pattern).
    static func userData(for index: Int) -> UnsafeMutableRawPointer? {
        UnsafeMutableRawPointer(bitPattern: index &+ 1)
    }

    static func index(from userData: UnsafeMutableRawPointer?) -> Int {
        Int(bitPattern: userData) &- 1
    }

    /// The earliest `submittedAt` of the requests held, for the response timeout: a scan, asked
    /// when the connection's health timer is armed or fires, not per request (a list in
    /// submission order cost ~75 instructions a request to keep).
    func oldestSubmittedAt() -> UInt64? {
        var oldest = UInt64.max
        var found = false
        for index in 0..<slots where ids[index] != 0 {
            oldest = min(oldest, states[index].submittedAt)
            found = true
        }
        return found ? oldest : nil
    }

    /// What the caller needs of an ended stream.
    struct Ended {
        var tag: UInt64
        var answered: Bool
        var headersSent: Bool
    }

    /// Frees slot `index` (which must be taken): its references are released and its state blanked.
    @discardableResult
    func remove(at index: Int) -> Ended {
        precondition(UInt(bitPattern: index) < UInt(bitPattern: slots) && ids[index] != 0, "H2ClientStreams: free slot")
        _ = (references + index).move()
        let state = states + index
        let ended = Ended(tag: state.pointee.tag, answered: state.pointee.answered,
                          headersSent: state.pointee.headersSent)
        state.pointee.blank()
        ids[index] = 0
        freeIndices[freeCount] = index
        freeCount &+= 1
        count &-= 1
        return ended
    }

    /// Every request still held, in index order, freeing its slot.
    func removeAll() -> [Ended] {
        var ended: [Ended] = []
        for index in 0..<slots where ids[index] != 0 { ended.append(remove(at: index)) }
        return ended
    }
}

extension H2ClientSession.Stream {
    /// Back to a free slot's state. The answer's parts moved out with its response (`capturedText`,
    /// `responseBody`): written over only when they are still there, which costs a release.
    mutating func blank() {
        streamID = 0
        bodyBase = nil
        bodyCount = 0
        bodyOffset = 0
        headersSent = false
        answered = false
        status = 0
        if hasCapturedText {
            capturedText = InlineText()
            hasCapturedText = false
        }
        capturedUUID = nil
        if !responseBody.isEmpty { responseBody = [] }
        contentLength = -1
        receivedBodyBytes = 0
        malformed = false
    }
}
