import CNGHTTP2
import Glibc

/// The server side of one HTTP/2 connection (the mock APNs), on nghttp2: bytes in, bytes out, events.
///
/// The owning connection feeds it what the socket read (`receive`), writes what it produces
/// (`drainOutput`), and answers each `.request` event with `respond` — at once or later (simulated
/// latency), always from the thread that owns the session. Single-threaded, like `H2ClientSession`.
public final class H2ServerSession {
    /// The session's settings, fixed for its life.
    public struct Configuration: Sendable {
        /// SETTINGS_MAX_CONCURRENT_STREAMS announced at start (APNs: 1 for a new token-auth connection).
        public var maxConcurrentStreams: Int
        /// Request bodies are kept up to this size; a longer one is read, cut and flagged.
        public var maxRequestBodyBytes: Int

        /// Settings; the defaults are APNs' stream limit and a body limit above its 4 KiB payloads.
        public init(maxConcurrentStreams: Int = 1000, maxRequestBodyBytes: Int = 16 * 1024) {
            self.maxConcurrentStreams = maxConcurrentStreams
            self.maxRequestBodyBytes = maxRequestBodyBytes
        }
    }

    struct Stream {
        var streamID: Int32
        var method = ""
        var path = ""
        var authority = ""
        var headers = H2RequestHeaders()
        var body: [UInt8] = []
        var bodyLength = 0
        var requestComplete = false
        var responded = false
        var responseBody: [UInt8] = []
        var responseOffset = 0
    }

    /// What the session was made with.
    public let configuration: Configuration
    @exclusivity(unchecked) var session: OpaquePointer?
    /// What the callbacks touch several times per request. Kept behind a pointer this session
    /// owns so these accesses skip the runtime exclusivity check a class's stored `var` gets (about
    /// 2 % of the mock server's time, plus 1 % for the smaller fields): the session is
    /// single-threaded and no access to them runs code that could reach them again.
    struct Bookkeeping {
        var streams = H2StreamTable<Stream>()
        /// The stream whose header block nghttp2 is delivering (`streamBegins`), so each field skips
        /// the stream user data lookup; 0 when none.
        var headerStreamID: Int32 = 0
        var headerStreamIndex = 0
        /// Request storage handed out with `.request` events, taken back once no request refers to
        /// it (`recycleRequestStorage`), and reused for the next streams: no allocation per request.
        var lentStorage: [(headers: H2RequestHeaders.Storage?, body: [UInt8])] = []
        var spareStorage: [(headers: H2RequestHeaders.Storage?, body: [UInt8])] = []
        /// Every request of a connection carries the same `:method` and `:authority`: their
        /// `String`s are made once, not per request.
        var lastMethod = H2RepeatedText()
        var lastAuthority = H2RepeatedText()
        var lastPath = H2RepeatedText()
        /// The names of never-indexed answer fields already put in HPACK's dynamic table.
        var indexedNames = H2IndexedNames()
    }

    private let bookkeeping: UnsafeMutablePointer<Bookkeeping> = {
        let storage = UnsafeMutablePointer<Bookkeeping>.allocate(capacity: 1)
        storage.initialize(to: Bookkeeping())
        return storage
    }()
    var book: Bookkeeping {
        unsafeAddress { UnsafePointer(bookkeeping) }
        unsafeMutableAddress { bookkeeping }
    }
    var streams: H2StreamTable<Stream> {
        _read { yield book.streams }
        _modify { yield &book.streams }
    }
    static let spareStorageLimit = 256
    @exclusivity(unchecked) var events: [H2ServerEvent] = []
    private let headerBlock = H2HeaderBlock()
    private let responseBlock = H2ResponseHeaderBlock()
    @exclusivity(unchecked) private var hasResponded = false

    /// Asked when a client opens a stream (before its headers are read): false refuses it at once with
    /// RST_STREAM(REFUSED_STREAM). For fault injection; nil admits every stream. Capture the owner
    /// weakly or unowned: the owner holds the session.
    public var admitsStream: ((_ streamID: Int32) -> Bool)?

    /// Resets of open streams (see `H2ResetRateLimit`); too many too fast end the connection.
    @exclusivity(unchecked) var resetLimit = H2ResetRateLimit(nowSeconds: H2ServerSession.nowSeconds())
    @exclusivity(unchecked) private var resetLimitExceeded = false

    /// PRIORITY frames, and HEADERS carrying priority, received (APNs clients must send none).
    public internal(set) var priorityFramesReceived = 0
    /// The most streams that were open at once.
    public internal(set) var maxConcurrentStreamsSeen = 0
    /// The value most recently announced in SETTINGS_MAX_CONCURRENT_STREAMS.
    @exclusivity(unchecked) public private(set) var announcedMaxConcurrentStreams: Int

    /// Creates the session and queues SETTINGS (MAX_CONCURRENT_STREAMS, push disabled, large receive
    /// windows); `drainOutput` produces them once the client's preface arrived or at once.
    public init(configuration: Configuration) throws(H2Error) {
        self.configuration = configuration
        announcedMaxConcurrentStreams = configuration.maxConcurrentStreams
        session = try H2ServerCallbacks.makeSession(owner: self)
        guard let session else { throw .terminated }
        try H2Wire.submitSettings(session, [
            H2Setting(id: NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, value: UInt32(clamping: configuration.maxConcurrentStreams)),
            H2Setting(id: NGHTTP2_SETTINGS_ENABLE_PUSH, value: 0),
            H2Setting(id: NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, value: 1 << 20),
        ])
        try H2Wire.check(nghttp2_session_set_local_window_size(session, H2Wire.flagNone, 0, 1 << 30))
    }

    deinit {
        if let session { nghttp2_session_del(session) }
        bookkeeping.deinitialize(count: 1)
        bookkeeping.deallocate()
    }

    // MARK: State

    /// nghttp2 still expects input on this connection.
    public var wantsRead: Bool { session.map { nghttp2_session_want_read($0) != 0 } ?? false }
    /// nghttp2 has output to send.
    public var wantsWrite: Bool { session.map { nghttp2_session_want_write($0) != 0 } ?? false }
    /// Nothing more to read or write: close the connection.
    public var isFinished: Bool { !wantsRead && !wantsWrite }
    /// Streams open now (requests being received or awaiting their response).
    public var openStreamCount: Int { streams.count }
    /// The highest client stream id nghttp2 handed to the application (GOAWAY's usual last-stream-id).
    public var lastProcessedStreamID: Int32 {
        session.map { nghttp2_session_get_last_proc_stream_id($0) } ?? 0
    }

    // MARK: Answers and control

    /// Answers a complete request. Returns false, sending nothing, when the stream is gone (the client
    /// reset it or the connection is closing) or was answered already. `body` is kept until sent.
    /// A field to be sent never indexed goes out indexed the first time the connection sends its
    /// name, as with `respond(field:)` (`H2IndexedNames`).
    @discardableResult
    public func respond(streamID: Int32, status: Int, headers: [H2Header] = [], body: [UInt8] = []) throws(H2Error) -> Bool {
        guard let session, let index = streamIndex(streamID), Self.awaitsResponse(&streams[index]) else { return false }
        let statusText = String(status)
        headerBlock.reset(fieldCount: 1 + headers.count,
                          byteCount: 7 + statusText.utf8.count + H2HeaderBlock.byteCount(headers))
        headerBlock.append(":status", statusText, neverIndexed: false)
        for header in headers {
            var name = header.name
            let neverIndexed = H2HeaderBlock.neverIndexed(header.indexing, notFirst: hasResponded)
                && !name.withUTF8 { book.indexedNames.indexesFirst($0) }
            headerBlock.append(header.name, header.value, neverIndexed: neverIndexed)
        }
        try submit(session, index: index, streamID: streamID, nv: headerBlock.nv, count: headerBlock.count, body: body)
        return true
    }

    /// Answers a complete request with `:status` and at most two more fields, allocating nothing on
    /// the Swift side for an empty body. Returns false, sending nothing, like `respond(headers:)`.
    @discardableResult
    public func respond(streamID: Int32, status: Int, field: H2ResponseField?, second: H2ResponseField? = nil,
                        body: [UInt8] = []) throws(H2Error) -> Bool {
        guard let session, let index = streamIndex(streamID), Self.awaitsResponse(&streams[index]) else { return false }
        let count = responseBlock.fill(status: status, field: field, second: second, names: &book.indexedNames)
        try submit(session, index: index, streamID: streamID, nv: responseBlock.nv, count: count, body: body)
        return true
    }

    /// Read through the table's in-place accessor: a plain read copies the whole record.
    private static func awaitsResponse(_ stream: inout Stream?) -> Bool {
        stream?.requestComplete == true && stream?.responded == false
    }

    private func submit(_ session: OpaquePointer, index: Int, streamID: Int32, nv: UnsafePointer<nghttp2_nv>,
                        count: Int, body: [UInt8]) throws(H2Error) {
        let result: Int32
        if body.isEmpty {
            result = nghttp2_submit_response(session, streamID, nv, count, nil)
        } else {
            streams[index]?.responseBody = body
            var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: H2StreamTable<Stream>.userData(for: index)),
                                                 read_callback: H2ServerCallbacks.readBody)
            result = nghttp2_submit_response(session, streamID, nv, count, &provider)
        }
        try H2Wire.check(result)
        streams[index]?.responded = true
        hasResponded = true
    }

    /// Resets a stream with REFUSED_STREAM: the client may send the request again.
    public func refuse(streamID: Int32) throws(H2Error) {
        guard let session else { return }
        try H2Wire.check(nghttp2_submit_rst_stream(session, H2Wire.flagNone, streamID, H2Wire.refusedStream))
    }

    /// Announces a new SETTINGS_MAX_CONCURRENT_STREAMS; nghttp2 enforces it once the client ACKs.
    public func updateMaxConcurrentStreams(_ value: Int) throws(H2Error) {
        guard let session else { return }
        try H2Wire.submitSettings(session, [
            H2Setting(id: NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, value: UInt32(clamping: value)),
        ])
        announcedMaxConcurrentStreams = value
    }

    /// Sends GOAWAY. Streams above `lastStreamID` (default: `lastProcessedStreamID`) are dropped
    /// unanswered, the client treats them as not processed; streams at or below it may still be
    /// answered. `debugData` is APNs' JSON, e.g. `{"reason":"Shutdown"}`. `isFinished` turns true
    /// once the remaining streams are done.
    public func goaway(lastStreamID: Int32? = nil, errorCode: UInt32 = 0, debugData: String = "") throws(H2Error) {
        guard let session else { return }
        var data = Array(debugData.utf8)
        let last = lastStreamID ?? nghttp2_session_get_last_proc_stream_id(session)
        let result = data.withUnsafeMutableBufferPointer {
            nghttp2_submit_goaway(session, H2Wire.flagNone, last, errorCode, $0.baseAddress, $0.count)
        }
        try H2Wire.check(result)
    }

    /// A client reset a stream that had not ended: past the limit, GOAWAY as nghttp2's own guard
    /// sends it (INTERNAL_ERROR, streams at or below the last one processed still finish).
    func openStreamReset() {
        guard let session, !resetLimitExceeded, !resetLimit.take(nowSeconds: Self.nowSeconds()) else { return }
        resetLimitExceeded = true
        _ = nghttp2_submit_goaway(session, H2Wire.flagNone, nghttp2_session_get_last_proc_stream_id(session),
                                  NGHTTP2_INTERNAL_ERROR.rawValue, nil, 0)
    }

    static func nowSeconds() -> UInt64 { Reactor.monotonicNanoseconds() / 1_000_000_000 }

    // MARK: Bytes

    /// Feeds bytes read from the connection; a thrown error is fatal (close the connection). Events
    /// wait in `drainEvents`.
    public func receive(_ bytes: [UInt8]) throws(H2Error) {
        guard let session else { throw .terminated }
        let result = bytes.withUnsafeBytes { H2Wire.receive(session, $0) }
        if result < 0 { throw H2Error(nghttp2Code: result) }
    }

    /// `receive(_:)` for a slice of a larger read buffer, without a copy.
    public func receive(_ bytes: ArraySlice<UInt8>) throws(H2Error) {
        guard let session else { throw .terminated }
        let result = bytes.withUnsafeBytes { H2Wire.receive(session, $0) }
        if result < 0 { throw H2Error(nghttp2Code: result) }
    }

    /// For the connection glue in this module, reading into memory it owns: `bytes` is only read
    /// during the call.
    func receive(_ bytes: UnsafeRawBufferPointer) throws(H2Error) {
        guard let session else { throw .terminated }
        let result = H2Wire.receive(session, bytes)
        if result < 0 { throw H2Error(nghttp2Code: result) }
    }

    /// Appends what is queued for the client to `buffer`, up to about `limit` bytes; returns the count.
    @discardableResult
    public func drainOutput(into buffer: inout [UInt8], limit: Int = 1 << 20) throws(H2Error) -> Int {
        guard let session else { return 0 }
        return try H2Wire.drainOutput(session, into: &buffer, limit: limit)
    }

    /// `drainOutput(into:limit:)` straight into `tls`'s output queue, stopping once `limit` bytes
    /// wait there.
    func drainOutput(into tls: TLSSession, limit: Int) throws(H2Error) -> Int {
        guard let session else { return 0 }
        return try H2Wire.drainOutput(session, into: tls, limit: limit)
    }

    /// Hands every queued event to `handle`, in order (it may call `respond` and the rest), then
    /// forgets them.
    public func drainEvents(_ handle: (H2ServerEvent) -> Void) {
        var index = 0
        while index < events.count {
            let event = events[index]
            index += 1
            handle(event)
        }
        events.removeAll(keepingCapacity: true)
        recycleRequestStorage()
    }

    /// Keeps the headers and bodies of delivered requests that nobody holds any more, emptied.
    private func recycleRequestStorage() {
        guard !book.lentStorage.isEmpty else { return }
        // Worked on as locals: each access to a class's array property is a runtime exclusivity check.
        var lent: [(headers: H2RequestHeaders.Storage?, body: [UInt8])] = []
        var spare: [(headers: H2RequestHeaders.Storage?, body: [UInt8])] = []
        swap(&lent, &book.lentStorage)
        swap(&spare, &book.spareStorage)
        for index in lent.indices where spare.count < Self.spareStorageLimit {
            // Still referenced by a request someone kept: left to it (the pool never writes into
            // storage a request can see).
            guard isKnownUniquelyReferenced(&lent[index].headers) else { continue }
            lent[index].headers?.removeAll()
            // Emptying a body someone kept makes a fresh buffer (copy on write); theirs is untouched.
            lent[index].body.removeAll(keepingCapacity: true)
            spare.append(lent[index])
        }
        lent.removeAll(keepingCapacity: true)
        swap(&lent, &book.lentStorage)
        swap(&spare, &book.spareStorage)
    }

    /// Events are waiting for `drainEvents(_:)`.
    public var hasEvents: Bool { !events.isEmpty }
}

/// A header value that usually repeats on a connection (`:method`, `:authority`, and `:path`, the
/// app's on every broadcast): the `String` of the last distinct bytes, reused while the bytes stay
/// the same. Compared with that `String`'s own bytes, so a new value (a device push's path, new
/// with each token) costs one `memcmp`, which a token ends early, and no copy besides its `String`.
struct H2RepeatedText {
    private var cached = ""

    mutating func text(_ value: UnsafeBufferPointer<UInt8>) -> String {
        if let base = value.baseAddress, value.count == cached.utf8.count,
           cached.utf8.withContiguousStorageIfAvailable({ memcmp($0.baseAddress!, base, value.count) == 0 }) == true {
            return cached
        }
        if value.isEmpty && cached.isEmpty { return cached }
        cached = H2Wire.string(value.baseAddress, value.count)
        return cached
    }
}
