import CNGHTTP2

/// nghttp2's callbacks for `H2ServerSession`, finding it through `user_data` (unretained).
enum H2ServerCallbacks {
    static func makeSession(owner: H2ServerSession) throws(H2Error) -> OpaquePointer {
        var callbacks: OpaquePointer? = nil
        try H2Wire.check(nghttp2_session_callbacks_new(&callbacks))
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, onBeginHeaders)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, onHeader)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, onDataChunk)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, onFrameRecv)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, onStreamClose)

        var option: OpaquePointer? = nil
        try H2Wire.check(nghttp2_option_new(&option))
        defer { nghttp2_option_del(option) }
        // Rapid resets are limited by H2ResetRateLimit, which does not count resets of ended streams.
        nghttp2_option_set_stream_reset_rate_limit(option, 1 << 62, 1)

        var session: OpaquePointer? = nil
        let userData = Unmanaged.passUnretained(owner).toOpaque()
        try H2Wire.check(nghttp2_session_server_new2(&session, callbacks, userData, option))
        guard let session else { throw H2Error(nghttp2Code: Int(NGHTTP2_ERR_NOMEM.rawValue)) }
        return session
    }

    /// Runs `body` with the session behind `user_data`, without retaining it: nghttp2 calls back only
    /// from inside the session's own calls, while the session is alive. (A retain and release per
    /// callback, a dozen callbacks per request, were visible in the mock server's profile.)
    @inline(__always)
    static func withOwner<Result>(_ userData: UnsafeMutableRawPointer?, _ body: (H2ServerSession) -> Result) -> Result {
        Unmanaged<H2ServerSession>.fromOpaque(userData!)._withUnsafeGuaranteedRef(body)
    }

    static let onBeginHeaders: nghttp2_on_begin_headers_callback = { _, frame, userData in
        guard let frame, frame.pointee.hd.type == H2Wire.frameHeaders,
              frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST else { return 0 }
        withOwner(userData) { $0.streamBegins(frame.pointee.hd.stream_id) }
        return 0
    }

    static let onHeader: nghttp2_on_header_callback = { _, frame, name, nameLength, value, valueLength, flags, userData in
        guard let frame, frame.pointee.hd.type == H2Wire.frameHeaders else { return 0 }
        guard let name, let value else { return 0 }
        withOwner(userData) {
            $0.header(streamID: frame.pointee.hd.stream_id, name: UnsafeBufferPointer(start: name, count: nameLength),
                      value: UnsafeBufferPointer(start: value, count: valueLength),
                      neverIndexed: flags & H2Wire.nvNoIndex != 0)
        }
        return 0
    }

    static let onDataChunk: nghttp2_on_data_chunk_recv_callback = { _, _, streamID, data, length, userData in
        guard let data else { return 0 }
        withOwner(userData) { $0.dataChunk(streamID: streamID, data: data, length: length) }
        return 0
    }

    static let onFrameRecv: nghttp2_on_frame_recv_callback = { _, frame, userData in
        guard let frame else { return 0 }
        withOwner(userData) { $0.frameReceived(frame) }
        return 0
    }

    static let onStreamClose: nghttp2_on_stream_close_callback = { _, streamID, errorCode, userData in
        withOwner(userData) { $0.streamClosed(streamID: streamID, errorCode: errorCode) }
        return 0
    }

    static let readBody: nghttp2_data_source_read_callback = { _, streamID, buffer, length, flags, source, userData in
        guard let buffer, let flags,
              let index = H2StreamTable<H2ServerSession.Stream>.index(from: source?.pointee.ptr) else {
            return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
        }
        return withOwner(userData) {
            $0.readBody(index: index, streamID: streamID, into: buffer, length: length, flags: flags)
        }
    }
}

// The session's side of the callbacks.
extension H2ServerSession {
    func streamIndex(_ streamID: Int32) -> Int? {
        guard let session else { return nil }
        return streams.index(of: streamID, userData: nghttp2_session_get_stream_user_data(session, streamID))
    }

    func streamBegins(_ streamID: Int32) {
        guard let session else { return }
        book.headerStreamID = 0
        if let admitsStream, !admitsStream(streamID) {
            // Not recorded: its headers and data are ignored, nghttp2 closes it once the RST is sent.
            _ = nghttp2_submit_rst_stream(session, H2Wire.flagNone, streamID, H2Wire.refusedStream)
            return
        }
        let spare = book.spareStorage.popLast()
        let stream = Stream(streamID: streamID, headers: H2RequestHeaders(reusing: spare?.headers),
                            body: spare?.body ?? [])
        let index = streams.insert(stream, streamID: streamID)
        _ = nghttp2_session_set_stream_user_data(session, streamID, H2StreamTable<Stream>.userData(for: index))
        maxConcurrentStreamsSeen = max(maxConcurrentStreamsSeen, streams.count)
        book.headerStreamID = streamID
        book.headerStreamIndex = index
    }

    /// Keeps the field's bytes; only the three pseudo-headers every request needs become `String`s.
    func header(streamID: Int32, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>,
                neverIndexed: Bool) {
        guard let session else { return }
        // The fields of a request's header block follow its `streamBegins`; trailers look it up.
        let userData = streamID == book.headerStreamID
            ? H2StreamTable<Stream>.userData(for: book.headerStreamIndex)
            : nghttp2_session_get_stream_user_data(session, streamID)
        var pseudo: (PseudoHeader, String)?
        if name.first == UInt8(ascii: ":"), let base = name.baseAddress {
            if H2Wire.equals(base, name.count, ":method") {
                pseudo = (.method, book.lastMethod.text(value))
            } else if H2Wire.equals(base, name.count, ":path") {
                pseudo = (.path, book.lastPath.text(value))
            } else if H2Wire.equals(base, name.count, ":authority") {
                pseudo = (.authority, book.lastAuthority.text(value))
            }
        }
        // One access to `streams` per field (a read would copy the table).
        Self.store(name: name, value: value, neverIndexed: neverIndexed, pseudo: pseudo, in: &streams,
                   streamID: streamID, userData: userData)
    }

    enum PseudoHeader { case method, path, authority }

    private static func store(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>,
                              neverIndexed: Bool, pseudo: (PseudoHeader, String)?,
                              in streams: inout H2StreamTable<Stream>, streamID: Int32,
                              userData: UnsafeMutableRawPointer?) {
        guard let index = streams.index(of: streamID, userData: userData) else { return }
        store(name: name, value: value, neverIndexed: neverIndexed, pseudo: pseudo, in: &streams[index])
    }

    private static func store(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>,
                              neverIndexed: Bool, pseudo: (PseudoHeader, String)?, in stream: inout Stream?) {
        switch pseudo {
        case (.method, let text)?: stream?.method = text
        case (.path, let text)?: stream?.path = text
        case (.authority, let text)?: stream?.authority = text
        case nil: break
        }
        stream?.headers.append(name: name, value: value, neverIndexed: neverIndexed)
    }

    func dataChunk(streamID: Int32, data: UnsafePointer<UInt8>, length: Int) {
        guard let index = streamIndex(streamID) else { return }
        Self.append(UnsafeBufferPointer(start: data, count: length), limit: configuration.maxRequestBodyBytes,
                    to: &streams[index])
    }

    private static func append(_ data: UnsafeBufferPointer<UInt8>, limit: Int, to stream: inout Stream?) {
        guard let kept = stream?.body.count else { return }
        stream?.bodyLength += data.count
        let room = limit - kept
        guard room > 0 else { return }
        stream?.body.append(contentsOf: UnsafeBufferPointer(rebasing: data.prefix(room)))
    }

    func frameReceived(_ frame: UnsafePointer<nghttp2_frame>) {
        let header = frame.pointee.hd
        switch header.type {
        case H2Wire.frameHeaders, H2Wire.frameData:
            if header.type == H2Wire.frameHeaders, header.flags & H2Wire.flagPriority != 0 { priorityFramesReceived += 1 }
            if header.flags & H2Wire.flagEndStream != 0 { requestComplete(streamID: header.stream_id) }
        case H2Wire.framePriority:
            priorityFramesReceived += 1
        case H2Wire.frameRstStream:
            // Before nghttp2 closes the stream: still in the table means it had not ended.
            if streamIndex(header.stream_id) != nil { openStreamReset() }
        case H2Wire.frameGoaway:
            let goaway = frame.pointee.goaway
            events.append(.goaway(H2GoAway(errorCode: goaway.error_code, lastStreamID: goaway.last_stream_id,
                                           debugData: H2Wire.string(goaway.opaque_data, goaway.opaque_data_len))))
        default:
            break
        }
    }

    private func requestComplete(streamID: Int32) {
        guard let index = streamIndex(streamID),
              let request = Self.takeRequest(from: &streams[index], limit: configuration.maxRequestBodyBytes)
        else { return }
        book.lentStorage.append((request.headers.storage, request.body))
        events.append(.request(request))
    }

    /// Marks the request complete and moves its storage into the event; the record keeps only
    /// what the response needs. Nil when the stream is gone or complete already.
    private static func takeRequest(from stream: inout Stream?, limit: Int) -> H2ServerRequest? {
        guard stream?.requestComplete == false, let streamID = stream?.streamID else { return nil }
        stream?.requestComplete = true
        let headers = stream?.headers ?? H2RequestHeaders()
        let body = stream?.body ?? []
        stream?.headers = H2RequestHeaders()
        stream?.body = []
        let bodyLength = stream?.bodyLength ?? 0
        return H2ServerRequest(streamID: streamID, method: stream?.method ?? "", path: stream?.path ?? "",
                               authority: stream?.authority ?? "", headers: headers, body: body,
                               bodyExceededLimit: bodyLength > limit, bodyLength: bodyLength)
    }

    func streamClosed(streamID: Int32, errorCode: UInt32) {
        guard let index = streamIndex(streamID), let stream = streams.remove(at: index) else { return }
        if !stream.responded { events.append(.streamClosed(streamID: streamID, errorCode: errorCode)) }
    }

    func readBody(index: Int, streamID: Int32, into buffer: UnsafeMutablePointer<UInt8>, length: Int,
                  flags: UnsafeMutablePointer<UInt32>) -> Int {
        guard let stream = streams[index], stream.streamID == streamID else {
            return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
        }
        let count = min(length, stream.responseBody.count - stream.responseOffset)
        stream.responseBody.withUnsafeBufferPointer { body in
            if let base = body.baseAddress, count > 0 { buffer.update(from: base + stream.responseOffset, count: count) }
        }
        let offset = stream.responseOffset + count
        streams[index]?.responseOffset = offset
        if offset == stream.responseBody.count { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
        return count
    }
}
