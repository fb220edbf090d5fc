import ByteScan
/// What a client session reports; delivered by `H2ClientSession.drainEvents(_:)`.
///
/// Every submitted request ends in exactly one of `.response`, `.notProcessed` or `.lost`.
public enum H2ClientEvent: Sendable {
    /// The server answered the request submitted with this tag.
    case response(H2Response)
    /// The server certainly did not process the request: safe to send again, on another connection if
    /// this one is closing.
    case notProcessed(tag: UInt64, cause: H2NotProcessedCause)
    /// The request's fate is unknown (its stream was reset, or the connection died after it was
    /// sent): the server may or may not have processed it.
    case lost(tag: UInt64, cause: H2LossCause)
    /// The server sent GOAWAY: no new requests on this connection. Requests above `lastStreamID`
    /// come back as `.notProcessed(.aboveGoawayLastStream)`; those at or below it may still be answered.
    case goaway(H2GoAway)
    /// The acknowledgement of the PING sent by `submitPing()` arrived.
    case pingAcknowledged
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS changed (unlimited reads as `UInt32.max`).
    case maxConcurrentStreamsChanged(Int)
}

/// A complete response to one request.
public struct H2Response: Sendable, Equatable {
    // Constants: an optional `var` starts as nil and is then assigned over, which made the
    // initializer build the response in memory and copy it out (a retain and release per response).
    /// The tag given to `submit`.
    public let tag: UInt64
    /// The `submittedAt` given to `submit` (for latency).
    public let submittedAt: UInt64
    /// The HTTP/2 stream the request went out on.
    public let streamID: Int32
    /// The answer had the header captured as text (`H2CapturedHeaders.text`: an APNs client's
    /// `apns-id`; see `apnsIDValue`). Declared here, in the padding after
    /// `streamID`: a wider response (and event) is copied by memcpy calls, no longer inline.
    public let hasAPNsID: Bool
    /// `:status`; 0 if the server sent none that parses.
    public let status: Int
    /// The header captured as text (an APNs client's `apns-id`), if present, kept inline (no
    /// allocation per response). The `apnsID` names are the API's since before captures were named.
    public var apnsIDText: InlineText? { hasAPNsID ? apnsIDValue : nil }
    /// `apnsIDText` apart: its text (empty without one) and whether there was one. An
    /// `InlineText?` is copied and destroyed through the runtime's generic enum witnesses (~100
    /// instructions each); the result record takes these two as they are.
    public let apnsIDValue: InlineText
    /// The header captured as text, if present.
    public var apnsID: String? { apnsIDText?.description }
    /// The header captured as a UUID (`H2CapturedHeaders.uuid`: an APNs client's `apns-unique-id`,
    /// which APNs' sandbox sends), when it held a UUID other than the nil UUID.
    public var uniqueID: UUIDBytes? { uniqueIDBytes.isNil ? nil : uniqueIDBytes }
    // Not optional, the nil UUID standing for none: an optional made the response (and the event
    // holding it) 136 bytes, past what the compiler copies inline, so every copy became a memcpy call.
    private let uniqueIDBytes: UUIDBytes
    /// The body (empty on 200; APNs' `{"reason":...}` JSON otherwise), at most `maxResponseBodyBytes`.
    public let body: [UInt8]

    /// A response with its `apns-id` as a `String` (tests and the mock's side).
    public init(tag: UInt64, submittedAt: UInt64, streamID: Int32, status: Int, apnsID: String?,
                uniqueID: UUIDBytes? = nil, body: [UInt8]) {
        self.init(tag: tag, submittedAt: submittedAt, streamID: streamID, status: status,
                  apnsIDText: apnsID.map(InlineText.init), uniqueID: uniqueID, body: body)
    }

    /// A response with its `apns-id` kept inline, as the session builds it.
    public init(tag: UInt64, submittedAt: UInt64, streamID: Int32, status: Int, apnsIDText: InlineText?,
                uniqueID: UUIDBytes? = nil, body: [UInt8]) {
        self.init(tag: tag, submittedAt: submittedAt, streamID: streamID, status: status,
                  apnsIDValue: apnsIDText ?? InlineText(), hasAPNsID: apnsIDText != nil, uniqueID: uniqueID, body: body)
    }

    /// A response with its `apns-id` as the session holds it: the text, and whether there was one.
    public init(tag: UInt64, submittedAt: UInt64, streamID: Int32, status: Int, apnsIDValue: InlineText,
                hasAPNsID: Bool, uniqueID: UUIDBytes? = nil, body: [UInt8]) {
        self.tag = tag
        self.submittedAt = submittedAt
        self.streamID = streamID
        self.status = status
        self.apnsIDValue = apnsIDValue
        self.hasAPNsID = hasAPNsID
        self.uniqueIDBytes = uniqueID ?? UUIDBytes(high: 0, low: 0)
        self.body = body
    }
}

/// Why a request came back unprocessed: the server never acted on it, so sending it again is safe.
public enum H2NotProcessedCause: Sendable, Equatable {
    /// RST_STREAM with REFUSED_STREAM from the server.
    case refusedStream
    /// The stream id is above the last-stream-id of the server's GOAWAY.
    case aboveGoawayLastStream
    /// Its HEADERS never left nghttp2 (the session closed or was terminated first).
    case neverSent
}

/// Why a request in flight was lost: the server may or may not have acted on it.
public enum H2LossCause: Sendable, Equatable {
    /// The server (or nghttp2, on a malformed response) reset the stream with this HTTP/2 error code.
    case streamReset(errorCode: UInt32)
    /// `terminate()`: the connection ended with the request in flight.
    case connectionLost
}

/// A GOAWAY frame from the peer.
public struct H2GoAway: Sendable, Equatable {
    /// The HTTP/2 error code (0 NO_ERROR for a graceful shutdown).
    public var errorCode: UInt32
    /// The highest stream the server may have processed; streams above it were not.
    public var lastStreamID: Int32
    /// The debug data as text (APNs sends JSON `{"reason":"..."}`); invalid UTF-8 is repaired.
    public var debugData: String

    /// A GOAWAY as received (or as a server sends it).
    public init(errorCode: UInt32, lastStreamID: Int32, debugData: String) {
        self.errorCode = errorCode
        self.lastStreamID = lastStreamID
        self.debugData = debugData
    }
}

/// What a server session reports; delivered by `H2ServerSession.drainEvents(_:)`.
public enum H2ServerEvent: Sendable {
    /// A complete request (END_STREAM received); answer with `respond(streamID:...)`.
    case request(H2ServerRequest)
    /// The client reset a stream before it was answered (or closed it); respond no more on it.
    case streamClosed(streamID: Int32, errorCode: UInt32)
    /// The client sent GOAWAY.
    case goaway(H2GoAway)
}

/// One request as a server session received it.
public struct H2ServerRequest: Sendable {
    /// The stream to answer on.
    public var streamID: Int32
    /// `:method`.
    public var method: String
    /// `:path`, e.g. `/3/device/<token>`.
    public var path: String
    /// `:authority`.
    public var authority: String
    /// Every header field in arrival order, pseudo-headers included, with its HPACK never-indexed flag;
    /// repeated fields appear repeatedly. Kept as bytes; `String`s are made on demand.
    public var headers: H2RequestHeaders
    /// The body, up to the session's `maxRequestBodyBytes`.
    public var body: [UInt8]
    /// The body was longer than `maxRequestBodyBytes` (it was read, and cut).
    public var bodyExceededLimit: Bool
    /// The body's full length as received.
    public var bodyLength: Int

    /// `headers` as `H2Field`s (allocates one per field: for tests and diagnostics).
    public var fields: [H2Field] { headers.fields }

    /// The values of every regular field named `name`, in order.
    public func values(of name: String) -> [String] {
        headers.values(of: name)
    }
}
