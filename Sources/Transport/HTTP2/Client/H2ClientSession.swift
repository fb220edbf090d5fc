import ByteScan
import CNGHTTP2

/// The client side of one HTTP/2 connection to APNs, on nghttp2: bytes in, bytes out, events.
///
/// It knows nothing of sockets, threads or clocks (h2load's `Session`): the owning connection feeds
/// it what the socket read (`receive`), writes what it produces (`drainOutput`, one TLS write per
/// batch), submits requests while `freeStreamSlots > 0`, and handles events after each call
/// (`drainEvents`). Single-threaded: one reactor thread owns it and makes every call.
///
/// Every submitted request ends in exactly one event: `.response`, `.notProcessed` or `.lost`, also
/// when the connection dies (`terminate()` hands back everything still in flight).
///
/// The connection's loop, on its reactor thread:
/// ```
/// on readable:  n = read(socket, &readBuffer); session.receive(readBuffer[0..<n])   // throws → close
/// then:         session.drainEvents { event in ... }        // responses, refusals, GOAWAY, ping acks
///               while session.freeStreamSlots > 0, let next = queue.pop() { try session.submit(...) }
///               session.drainOutput(into: &writeBuffer)     // one TLS write for the whole batch
/// on close/EOF/timeout, or when session.isFinished:  session.terminate(); session.drainEvents { ... }
/// ```
public final class H2ClientSession {
    /// The session's settings, fixed for its life.
    public struct Configuration: Sendable {
        /// `:authority` of every request (the endpoint's host, with `:port` when not 443).
        public var authority: String
        /// Local cap on concurrent streams (`--max-streams`); the server's setting may lower it.
        public var maxStreams: Int
        /// Token auth: one stream slot until the first response whose status is not 403 (APNs lets a
        /// new token-auth connection run one stream until a request with a valid token succeeded;
        /// a 403, credentials refused or token expired, proves nothing, any other status does).
        public var singleStreamUntilAuthorized: Bool
        /// Response bodies are cut to this many bytes (APNs' are small JSON objects).
        public var maxResponseBodyBytes: Int
        /// The response headers each response keeps (an APNs client's `apns-id` and `apns-unique-id`).
        public var capturedHeaders: H2CapturedHeaders

        /// Settings; the defaults are APNs' stream limit and a body limit far above its error bodies.
        public init(authority: String, maxStreams: Int = 1000, singleStreamUntilAuthorized: Bool = false,
                    maxResponseBodyBytes: Int = 16 * 1024, capturedHeaders: H2CapturedHeaders = .none) {
            self.authority = authority
            self.maxStreams = maxStreams
            self.singleStreamUntilAuthorized = singleStreamUntilAuthorized
            self.maxResponseBodyBytes = maxResponseBodyBytes
            self.capturedHeaders = capturedHeaders
        }
    }

    /// A request's state in flight (its body and template: `H2ClientStreams.References`).
    struct Stream {
        var streamID: Int32 = 0
        var tag: UInt64 = 0
        var submittedAt: UInt64 = 0
        /// The body's bytes, held by the slot's `References.body`.
        var bodyBase: UnsafePointer<UInt8>?
        var bodyCount = 0
        var bodyOffset = 0
        var headersSent = false
        var answered = false
        var status = 0
        /// The captured text header's value (`H2CapturedHeaders.text`), when `hasCapturedText`.
        var capturedText = InlineText()
        var hasCapturedText = false
        /// The captured UUID header's value, when the answer carried a UUID there.
        var capturedUUID: UUIDBytes?
        var responseBody: [UInt8] = []
        /// The answer's `content-length` (-1: none) and the DATA bytes that arrived, compared at its end.
        var contentLength = -1
        var receivedBodyBytes = 0
        /// The answer broke HTTP's rules (see `H2ClientCallbacks.makeSession`): it ends as a stream error.
        var malformed = false
        /// The session's `pathPrefixGeneration` whose prefix the slot's `:path` storage holds
        /// (kept when the slot is blanked: the storage keeps its bytes).
        var pathPrefixGeneration = 0
    }

    /// What the session was made with.
    public let configuration: Configuration
    @exclusivity(unchecked) var session: OpaquePointer?
    /// A `let`: calls on a constant class reference borrow it, where a `var` would be retained and
    /// released around each (one pair per call, several calls per request).
    let streams = H2ClientStreams()
    let events = H2EventQueue<H2ClientEvent>()
    let headerBlock = H2HeaderBlock()
    /// The `:path` prefix that slots hold when their `pathPrefixGeneration` is this one (see
    /// `setPath`): a slot reused by the same template's requests writes only the token.
    @exclusivity(unchecked) var pathPrefix: [UInt8] = []
    @exclusivity(unchecked) var pathPrefixGeneration = 0
    /// `nghttp2_session_check_request_allowed` as of the last call into nghttp2 that can change it
    /// (receive, drainOutput, a submit near the end of the stream ids): asked per request, it and
    /// the server's limit were three calls into nghttp2.
    @exclusivity(unchecked) var nghttp2AllowsRequests = true
    /// Set for the length of a drain (nghttp2 asks for DATA only inside `nghttp2_session_mem_send`).
    @exclusivity(unchecked) var dataTarget = DataTarget.none
    /// The template whose request the header block holds, when the next request of it may change
    /// `:path` alone (see `fillHeaderBlock`), and the first-request flags it was built with. Held:
    /// the block points at the template's bytes.
    @exclusivity(unchecked) var blockTemplate: H2RequestTemplate?
    @exclusivity(unchecked) var blockNotFirst = false
    /// A request went out before: fields indexed on the first request only are never-indexed now.
    @exclusivity(unchecked) var hasSubmitted = false
    /// nghttp2's allocator for this session; freed after the nghttp2 session (see deinit).
    let memory = H2SessionMemory()
    /// `:authority`, in storage nghttp2 may read uncopied: freed after the nghttp2 session.
    let authorityStorage: UnsafeMutableBufferPointer<UInt8>
    /// `configuration.capturedHeaders`' names, read by the header callback; freed in deinit.
    let capturedNames: H2CapturedNames
    @exclusivity(unchecked) private var shutdownRequested = false
    @exclusivity(unchecked) var lastKnownMaxConcurrentStreams: Int

    /// The server's GOAWAY, once received.
    @exclusivity(unchecked) public internal(set) var receivedGoaway: H2GoAway?
    /// False until a response other than 403 arrived, when `singleStreamUntilAuthorized` is set.
    @exclusivity(unchecked) public internal(set) var isAuthorized: Bool
    /// A PING from `submitPing()` awaits its acknowledgement (the connection times it).
    @exclusivity(unchecked) public internal(set) var isPingOutstanding = false
    /// The server's first SETTINGS frame arrived: its stream limit is known, requests may start.
    @exclusivity(unchecked) public internal(set) var hasReceivedSettings = false

    /// Creates the session and queues the connection preface and SETTINGS (push disabled, large
    /// receive windows so responses never wait for WINDOW_UPDATE); `drainOutput` produces them.
    public init(configuration: Configuration) throws(H2Error) {
        precondition(configuration.maxStreams > 0, "H2ClientSession: maxStreams must be positive")
        self.configuration = configuration
        authorityStorage = .allocate(capacity: max(1, configuration.authority.utf8.count))
        _ = authorityStorage.initialize(from: configuration.authority.utf8)
        capturedNames = H2CapturedNames(configuration.capturedHeaders)
        isAuthorized = !configuration.singleStreamUntilAuthorized
        lastKnownMaxConcurrentStreams = 1
        session = try H2ClientCallbacks.makeSession(owner: self)
        guard let session else { throw .terminated }
        try H2Wire.submitSettings(session, [
            H2Setting(id: NGHTTP2_SETTINGS_ENABLE_PUSH, value: 0),
            H2Setting(id: NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, value: H2ClientSession.windowSize),
            H2Setting(id: NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, value: 1),
        ])
        try H2Wire.check(nghttp2_session_set_local_window_size(
            session, H2Wire.flagNone, 0, Int32(H2ClientSession.windowSize)))
    }

    deinit {
        if let session { nghttp2_session_del(session) }
        authorityStorage.deallocate()
        capturedNames.deallocate()
    }

    static let windowSize: UInt32 = 1 << 30
    static let frameHeaderBytes = 9

    // MARK: State the connection reads

    /// How many more requests may be submitted now: min(server's MAX_CONCURRENT_STREAMS, `maxStreams`,
    /// 1 while not authorized) minus in-flight; 0 once GOAWAY was received, `shutdown()` was called,
    /// or the session was terminated. Check it after every `receive` and `drainEvents`.
    public var freeStreamSlots: Int {
        guard acceptsRequests else { return 0 }
        // The server's limit as `frameReceived` read it from nghttp2 after each of its SETTINGS.
        var limit = min(lastKnownMaxConcurrentStreams, configuration.maxStreams)
        if !isAuthorized { limit = min(limit, 1) }
        return max(0, limit - streams.count)
    }

    /// The server's current SETTINGS_MAX_CONCURRENT_STREAMS (1 until its first SETTINGS arrives).
    public var serverMaxConcurrentStreams: Int {
        guard let session else { return 0 }
        return Int(nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS))
    }

    /// Requests submitted and not yet ended by an event.
    public var inFlightCount: Int { streams.count }

    /// New requests may be submitted (slots permitting): false after GOAWAY either way (including the
    /// one nghttp2 sends on a protocol error), `shutdown()` or `terminate()`.
    public var acceptsRequests: Bool {
        session != nil && receivedGoaway == nil && !shutdownRequested && nghttp2AllowsRequests
    }

    func refreshAllowsRequests() {
        nghttp2AllowsRequests = session.map { nghttp2_session_check_request_allowed($0) != 0 } ?? false
    }

    /// nghttp2 wants more bytes from the peer; false once the session is done (after GOAWAY both ways
    /// with nothing in flight, a protocol error, or `terminate()`).
    public var wantsRead: Bool { session.map { nghttp2_session_want_read($0) != 0 } ?? false }

    /// nghttp2 has bytes to send: call `drainOutput`.
    public var wantsWrite: Bool { session.map { nghttp2_session_want_write($0) != 0 } ?? false }

    /// Neither side has anything more to say: the connection may close (then call `terminate()`).
    public var isFinished: Bool { !wantsRead && !wantsWrite }

    /// The `submittedAt` of the oldest request still in flight (for a per-request response timeout).
    public func oldestInFlightSubmittedAt() -> UInt64? {
        streams.oldestSubmittedAt()
    }

    // MARK: Requests (submitting: the extension below)

    /// Sends a PING (the connection times its acknowledgement, `.pingAcknowledged`). Returns false,
    /// sending nothing, while an earlier one is unacknowledged.
    @discardableResult
    public func submitPing() throws(H2Error) -> Bool {
        guard let session else { throw .terminated }
        if isPingOutstanding { return false }
        try H2Wire.check(nghttp2_submit_ping(session, H2Wire.flagNone, nil))
        isPingOutstanding = true
        return true
    }

    // MARK: Bytes

    /// Feeds bytes read from the connection. Events they cause wait in `drainEvents`. A thrown error
    /// is fatal for the session: the connection closes and calls `terminate()`. A peer that breaks the
    /// protocol more mildly gets a GOAWAY from nghttp2 (drain and write it) and `isFinished` turns true.
    public func receive(_ bytes: [UInt8]) throws(H2Error) {
        guard let session else { throw .terminated }
        let result = bytes.withUnsafeBytes { H2Wire.receive(session, $0) }
        refreshAllowsRequests()
        if result < 0 { throw H2Error(nghttp2Code: result) }
    }

    /// `receive(_:)` for a slice of a larger read buffer, without a copy.
    public func receive(_ bytes: ArraySlice<UInt8>) throws(H2Error) {
        guard let session else { throw .terminated }
        let result = bytes.withUnsafeBytes { H2Wire.receive(session, $0) }
        refreshAllowsRequests()
        if result < 0 { throw H2Error(nghttp2Code: result) }
    }

    /// For the connection glue in this module, reading into memory it owns: `bytes` is only read
    /// during the call.
    func receive(_ bytes: UnsafeRawBufferPointer) throws(H2Error) {
        guard let session else { throw .terminated }
        let result = H2Wire.receive(session, bytes)
        refreshAllowsRequests()
        if result < 0 { throw H2Error(nghttp2Code: result) }
    }

    /// Appends everything queued for the peer to `buffer` (which the caller reuses and writes in one
    /// go), stopping once it holds `limit` bytes; `wantsWrite` tells whether more is queued. Request
    /// bodies are copied into the output here. Returns the number of bytes appended.
    @discardableResult
    public func drainOutput(into buffer: inout [UInt8], limit: Int = 1 << 20) throws(H2Error) -> Int {
        guard let session else { return 0 }
        defer { refreshAllowsRequests() }
        // Through one pointer: DATA payloads are appended from nghttp2's send_data callback
        // (`sendData`) in the middle of the loop.
        return try withUnsafeMutablePointer(to: &buffer) { output throws(H2Error) -> Int in
            let before = output.pointee.count
            dataTarget = .array(output)
            defer { dataTarget = .none }
            while output.pointee.count < limit {
                var chunk: UnsafePointer<UInt8>? = nil
                let length = nghttp2_session_mem_send(session, &chunk)
                if length < 0 { throw H2Error(nghttp2Code: length) }
                guard length > 0, let chunk else { break }
                output.pointee.append(contentsOf: UnsafeBufferPointer(start: chunk, count: length))
            }
            return output.pointee.count - before
        }
    }

    /// `drainOutput(into:limit:)` straight into `tls`'s output queue, stopping once `limit` bytes
    /// wait there (the connection's write path).
    func drainOutput(into tls: TLSSession, limit: Int) throws(H2Error) -> Int {
        guard let session else { return 0 }
        defer { refreshAllowsRequests() }
        let before = tls.pendingOutputCount
        dataTarget = .tls(Unmanaged.passUnretained(tls))
        defer { dataTarget = .none }
        _ = try H2Wire.drainOutput(session, into: tls, limit: limit)
        return tls.pendingOutputCount - before
    }

    /// Where a drain puts the DATA payloads nghttp2 leaves to `sendData` (NGHTTP2_DATA_FLAG_NO_COPY).
    enum DataTarget {
        case none
        case array(UnsafeMutablePointer<[UInt8]>)
        case tls(Unmanaged<TLSSession>)
    }

    /// Hands every queued event to `handle`, in order, then forgets them. `handle` may call back into
    /// the session (submit, ping, shutdown, terminate); events that causes are delivered in this call.
    public func drainEvents(_ handle: (H2ClientEvent) -> Void) {
        while !events.isEmpty { handle(events.removeFirst()) }
    }

    /// Events are waiting for `drainEvents`.
    public var hasEvents: Bool { !events.isEmpty }

    // MARK: Ending

    /// Graceful close: sends GOAWAY(NO_ERROR), submits nothing more, lets in-flight requests finish.
    /// `isFinished` turns true when the last one ended.
    public func shutdown() throws(H2Error) {
        guard let session, !shutdownRequested else { return }
        shutdownRequested = true
        try H2Wire.check(nghttp2_submit_goaway(session, H2Wire.flagNone,
                                               nghttp2_session_get_last_proc_stream_id(session),
                                               NGHTTP2_NO_ERROR.rawValue, nil, 0))
        refreshAllowsRequests()
    }

    /// The connection is gone (reset, EOF, timeout, protocol error): every request in flight comes back,
    /// `.lost(.connectionLost)` if its HEADERS had been produced by `drainOutput`, else
    /// `.notProcessed(.neverSent)`; the nghttp2 session is freed. Safe to call more than once.
    public func terminate() {
        guard let session else { return }
        for stream in streams.removeAll() {
            events.append(stream.headersSent
                ? .lost(tag: stream.tag, cause: .connectionLost)
                : .notProcessed(tag: stream.tag, cause: .neverSent))
        }
        nghttp2_session_del(session)
        self.session = nil
    }
}

// Submitting requests: the header block (copied from a template on the hot path), the stream's
// record and nghttp2's submit, and the submission order the response timeout reads.

extension H2ClientSession {
    /// Submits `method path` with `headers` and `body`, to be matched by `tag` in its ending event.
    /// The form callers use; a bulk sender's forms below reuse a template's header fields.
    ///
    /// `:scheme` is https and `:authority` the configured one; `:path` is sent never-indexed, each header
    /// by its `indexing`. No PRIORITY information is ever sent. The session keeps `body` (a reference,
    /// not a copy) until the stream's DATA is written. `submittedAt` is the caller's monotonic clock
    /// reading (non-decreasing across submits), returned in the response and by
    /// `oldestInFlightSubmittedAt()`. Returns the stream id.
    @discardableResult
    public func submit(path: String, headers: [H2Header], body: [UInt8], tag: UInt64,
                       submittedAt: UInt64 = 0, method: String = "POST") throws(H2Error) -> Int32 {
        guard session != nil else { throw .terminated }
        // `freeStreamSlots` is 0 when no request is accepted: asking `acceptsRequests` first, every
        // time, was a second call into nghttp2 per request.
        guard freeStreamSlots > 0 else { throw acceptsRequests ? .noFreeStreamSlot : .notAcceptingRequests }

        fillHeaderBlock(method: method, path: path, headers: headers)
        let index = streams.insert(tag: tag, submittedAt: submittedAt)
        streams.keep(body: body[...], template: nil, at: index)
        return try submitFilledHeaders(index: index)
    }

    /// Submits `template`'s method to its path prefix followed by `pathSuffix`, with its header fields
    /// and then `headers`, and `body`; otherwise as `submit(path:headers:body:tag:submittedAt:method:)`.
    /// The hot path of a bulk sender: the fixed part of the header block is reused, not rebuilt, and
    /// `body` is kept as the slice it is (no copy) until its DATA is written.
    /// `template` and `body` are consumed: they move into the stream's record, so passing a
    /// reference the caller no longer needs costs no retain here and no release at the caller.
    @discardableResult
    package func submit(template: consuming H2RequestTemplate, pathSuffix: ArraySlice<UInt8>, headers: [H2Header] = [],
                        body: consuming ArraySlice<UInt8>, tag: UInt64, submittedAt: UInt64 = 0) throws(H2Error) -> Int32 {
        guard session != nil else { throw .terminated }
        // `freeStreamSlots` is 0 when no request is accepted: asking `acceptsRequests` first, every
        // time, was a second call into nghttp2 per request.
        guard freeStreamSlots > 0 else { throw acceptsRequests ? .noFreeStreamSlot : .notAcceptingRequests }
        let index = streams.insert(tag: tag, submittedAt: submittedAt)
        pathSuffix.withUnsafeBytes { fillHeaderBlock(template: template, pathSuffix: $0, headers: headers, index: index) }
        streams.keep(body: consume body, template: consume template, at: index)
        return try submitFilledHeaders(index: index)
    }

    /// `submit(template:pathSuffix:headers:body:tag:submittedAt:)` with the path suffix and the body
    /// as ranges of one buffer, which moves into the request's stream: a caller that holds both in
    /// one buffer (a CSV batch's storage) hands over one reference, not two slices, each a retain
    /// and a release on a line that other threads touch too.
    @discardableResult
    package func submit(template: consuming H2RequestTemplate, bytes: consuming [UInt8], pathSuffix: Range<Int>,
                        body: Range<Int>, headers: [H2Header] = [], tag: UInt64, submittedAt: UInt64 = 0) throws(H2Error) -> Int32 {
        guard session != nil else { throw .terminated }
        guard freeStreamSlots > 0 else { throw acceptsRequests ? .noFreeStreamSlot : .notAcceptingRequests }
        precondition(pathSuffix.lowerBound >= 0 && pathSuffix.upperBound <= bytes.count, "H2ClientSession: path suffix out of bounds")
        let index = streams.insert(tag: tag, submittedAt: submittedAt)
        bytes.withUnsafeBytes { buffer in
            fillHeaderBlock(template: template, pathSuffix: UnsafeRawBufferPointer(rebasing: buffer[pathSuffix]),
                            headers: headers, index: index)
        }
        streams.keep(body: (consume bytes)[body], template: consume template, at: index)
        return try submitFilledHeaders(index: index)
    }

    /// Submits the header block for the request in slot `index` (its references kept already).
    private func submitFilledHeaders(index: Int) throws(H2Error) -> Int32 {
        guard let session else {
            streams.remove(at: index)
            throw .terminated
        }
        let userData = H2ClientStreams.userData(for: index)
        let streamID: Int32
        if streams[index].bodyCount == 0 {
            streamID = nghttp2_submit_request(session, nil, headerBlock.nv, headerBlock.count, nil, userData)
        } else {
            var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: userData),
                                                 read_callback: H2ClientCallbacks.readBody)
            streamID = nghttp2_submit_request(session, nil, headerBlock.nv, headerBlock.count, &provider, userData)
        }
        guard streamID > 0 else {
            streams.remove(at: index)
            throw H2Error(nghttp2Code: Int(streamID))
        }
        streams.setStreamID(streamID, at: index)
        hasSubmitted = true
        // nghttp2 refuses requests once its stream ids run out.
        if streamID > Int32.max - 4 { refreshAllowsRequests() }
        return streamID
    }

    /// The `:path` field's place in a template request's header block.
    private static let pathField = 3
    private static let pathFlags = H2HeaderBlock.uncopied | H2Wire.nvNoIndex

    @inline(__always)
    private func fillHeaderBlock(template: H2RequestTemplate, pathSuffix suffix: UnsafeRawBufferPointer,
                                 headers: [H2Header], index: Int) {
        let prefix = template.pathPrefix
        // The block the request before built serves again when only `:path` (or the template's
        // suffix field) differs: the same template, the same first-request flags, no row headers
        // of its own.
        if headers.isEmpty, template === blockTemplate, hasSubmitted == blockNotFirst,
           prefix.count + suffix.count <= H2ClientStreams.pathStride {
            setPath(template: template, suffix: suffix, index: index)
        } else {
            rebuildHeaderBlock(template: template, pathSuffix: suffix, headers: headers, index: index)
        }
    }

    @inline(never)
    private func rebuildHeaderBlock(template: H2RequestTemplate, pathSuffix suffix: UnsafeRawBufferPointer,
                                    headers: [H2Header], index: Int) {
        let prefix = template.pathPrefix
        let suffixField = template.hasSuffixField
        // The slot holds the prefix and the suffix back to back, whether the suffix ends `:path`
        // or is the suffix field's value.
        let slotCount = prefix.count + suffix.count
        let inSlot = slotCount <= H2ClientStreams.pathStride
        // Only a long `:path` (or suffix) and the row's own headers are copied into the block (and
        // by nghttp2); the other fields point at static text, the template and `authorityStorage`, uncopied.
        let byteCount = (inSlot ? 0 : slotCount + template.suffixFieldName.count) + H2HeaderBlock.byteCount(headers)
        headerBlock.reset(fieldCount: 5 + template.fieldCount + headers.count, byteCount: byteCount)
        headerBlock.appendUncopied(name: ":method", value: template.method, neverIndexed: false)
        headerBlock.appendUncopied(name: ":scheme", value: UnsafeBufferPointer(start: Self.https.utf8Start,
                                                                               count: Self.https.utf8CodeUnitCount),
                                   neverIndexed: false)
        headerBlock.appendUncopied(name: ":authority", value: UnsafeBufferPointer(authorityStorage), neverIndexed: false)
        if !prefix.elementsEqual(pathPrefix) {
            pathPrefix = Array(prefix)
            pathPrefixGeneration += 1
        }
        let noSuffix = UnsafeRawBufferPointer(start: nil, count: 0)
        if inSlot {
            headerBlock.appendUncopied(name: ":path", value: UnsafeBufferPointer(start: nil, count: 0), neverIndexed: true)
        } else {
            StaticString(":path").withUTF8Buffer { name in
                headerBlock.append(name: UnsafeRawBufferPointer(name), value: UnsafeRawBufferPointer(prefix),
                                   valueSuffix: suffixField ? noSuffix : suffix, neverIndexed: true)
            }
        }
        headerBlock.append(template, notFirst: hasSubmitted)
        if suffixField {
            // Indexed on the session's first request only (`suffixFieldFlags`).
            if inSlot {
                headerBlock.appendUncopied(name: template.suffixFieldName, value: UnsafeBufferPointer(start: nil, count: 0),
                                           neverIndexed: hasSubmitted)
            } else {
                headerBlock.append(name: UnsafeRawBufferPointer(template.suffixFieldName), value: suffix,
                                   neverIndexed: hasSubmitted)
            }
        }
        if !headers.isEmpty { headerBlock.append(headers, notFirst: hasSubmitted) }
        // After the fields it points: `:path` and the suffix field.
        if inSlot { setPath(template: template, suffix: suffix, index: index) }
        let reusable = headers.isEmpty && inSlot
        blockTemplate = reusable ? template : nil
        blockNotFirst = hasSubmitted
    }

    /// Writes `:path` (and `template`'s suffix field's value) into slot `index`'s storage, where
    /// nghttp2 reads it (uncopied) when it encodes the HEADERS frame: the slot is taken until the
    /// stream ends.
    @inline(__always)
    private func setPath(template: H2RequestTemplate, suffix: UnsafeRawBufferPointer, index: Int) {
        let prefix = template.pathPrefix
        let path = streams.path(at: index)
        // The prefix is there already when the slot's last request had it.
        let stream = streams.state(at: index)
        if stream.pointee.pathPrefixGeneration != pathPrefixGeneration {
            if let base = prefix.baseAddress, prefix.count > 0 { path.update(from: base, count: prefix.count) }
            stream.pointee.pathPrefixGeneration = pathPrefixGeneration
        }
        if let base = suffix.baseAddress, suffix.count > 0 {
            UnsafeMutableRawPointer(path + prefix.count).copyMemory(from: base, byteCount: suffix.count)
        }
        guard template.hasSuffixField else {
            headerBlock.replaceValue(at: Self.pathField, value: path, count: prefix.count + suffix.count, flags: Self.pathFlags)
            return
        }
        headerBlock.replaceValue(at: Self.pathField, value: path, count: prefix.count, flags: Self.pathFlags)
        headerBlock.replaceValue(at: Self.pathField + 1 + template.fieldCount, value: path + prefix.count,
                                 count: suffix.count, flags: hasSubmitted ? Self.pathFlags : Self.suffixFieldFirstFlags)
    }

    /// The suffix field (a broadcast's `apns-channel-id`) on a session's first request: indexed, so
    /// that its name (and that one value) enters HPACK's dynamic table; every later request sends it
    /// never indexed (`pathFlags`: a campaign's many values would only churn the table), and nghttp2
    /// then names it by its index in the table instead of a Huffman-coded literal of 15 bytes.
    private static let suffixFieldFirstFlags = H2HeaderBlock.uncopied

    private static let https: StaticString = "https"

    private func fillHeaderBlock(method: String, path: String, headers: [H2Header]) {
        blockTemplate = nil
        // 34 bytes of pseudo-header names and "https".
        let byteCount = 34 + method.utf8.count + path.utf8.count + configuration.authority.utf8.count
            + H2HeaderBlock.byteCount(headers)
        headerBlock.reset(fieldCount: 4 + headers.count, byteCount: byteCount)
        headerBlock.append(":method", method, neverIndexed: false)
        headerBlock.append(":scheme", "https", neverIndexed: false)
        headerBlock.append(":authority", configuration.authority, neverIndexed: false)
        headerBlock.append(":path", path, neverIndexed: true)
        headerBlock.append(headers, notFirst: hasSubmitted)
    }
}
