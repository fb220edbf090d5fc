import ByteScan
import CNGHTTP2

/// nghttp2's callbacks for `H2ClientSession`: C functions without captures that find their session
/// through `user_data` (unretained: the session owns the nghttp2 session, so it outlives every call).
enum H2ClientCallbacks {
    static func makeSession(owner: H2ClientSession) throws(H2Error) -> OpaquePointer {
        var callbacks: OpaquePointer? = nil
        try H2Wire.check(nghttp2_session_callbacks_new(&callbacks))
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_header_callback(callbacks, onHeader)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, onDataChunk)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, onFrameRecv)
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, onFrameSend)
        nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks, onFrameNotSend)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, onStreamClose)
        nghttp2_session_callbacks_set_send_data_callback(callbacks, sendData)

        var option: OpaquePointer? = nil
        try H2Wire.check(nghttp2_option_new(&option))
        defer { nghttp2_option_del(option) }
        // Without this nghttp2 assumes 100 concurrent streams until the server's SETTINGS arrive.
        nghttp2_option_set_peer_max_concurrent_streams(option, 1)
        // nghttp2's HTTP checks validate every received header byte by byte (~700 instructions per
        // answer); the session checks what an answer's meaning depends on itself (`header`,
        // `dataChunk`, `responseComplete`): one three-digit final `:status`, a `content-length`
        // that the DATA matches. Anything else odd in a field is written out escaped, never trusted.
        nghttp2_option_set_no_http_messaging(option, 1)

        var session: OpaquePointer? = nil
        let userData = Unmanaged.passUnretained(owner).toOpaque()
        var memory = owner.memory.nghttp2Memory
        try H2Wire.check(nghttp2_session_client_new3(&session, callbacks, userData, option, &memory))
        guard let session else { throw H2Error(nghttp2Code: Int(NGHTTP2_ERR_NOMEM.rawValue)) }
        return session
    }

    /// Runs `body` with the session behind `user_data`, without retaining it: nghttp2 calls back only
    /// from inside the session's own calls, while the session is alive. (A retain and release per
    /// callback, six callbacks per request, were 12 atomic operations per row.)
    @inline(__always)
    static func withOwner<Result>(_ userData: UnsafeMutableRawPointer?, _ body: (H2ClientSession) -> Result) -> Result {
        Unmanaged<H2ClientSession>.fromOpaque(userData!)._withUnsafeGuaranteedRef(body)
    }

    static let onHeader: nghttp2_on_header_callback = { _, frame, name, nameLength, value, valueLength, _, userData in
        guard let frame, let name, let value, frame.pointee.hd.type == H2Wire.frameHeaders else { return 0 }
        withOwner(userData) {
            $0.header(streamID: frame.pointee.hd.stream_id, name: name, nameLength: nameLength,
                      value: value, valueLength: valueLength)
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

    static let onFrameSend: nghttp2_on_frame_send_callback = { _, frame, userData in
        guard let frame, frame.pointee.hd.type == H2Wire.frameHeaders,
              frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST else { return 0 }
        withOwner(userData) { $0.requestHeadersSent(streamID: frame.pointee.hd.stream_id) }
        return 0
    }

    static let onFrameNotSend: nghttp2_on_frame_not_send_callback = { _, frame, _, userData in
        guard let frame, frame.pointee.hd.type == H2Wire.frameHeaders,
              frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST else { return 0 }
        withOwner(userData) { $0.requestNotSent(streamID: frame.pointee.hd.stream_id) }
        return 0
    }

    static let onStreamClose: nghttp2_on_stream_close_callback = { _, streamID, errorCode, userData in
        withOwner(userData) { $0.streamClosed(streamID: streamID, errorCode: errorCode) }
        return 0
    }

    /// Writes a DATA frame whose payload `readBody` left uncopied: the frame header nghttp2 made,
    /// then the body's bytes, straight into the drain's output (one copy of the body, not two).
    static let sendData: nghttp2_send_data_callback = { _, frame, header, length, source, userData in
        guard let frame, let header else { return Int32(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
        let index = H2ClientStreams.index(from: source?.pointee.ptr)
        return withOwner(userData) {
            $0.sendData(index: index, streamID: frame.pointee.hd.stream_id, header: header, length: length)
        }
    }

    /// Tells nghttp2 how much of a request body the next DATA frame carries; `sendData` writes it.
    static let readBody: nghttp2_data_source_read_callback = { _, streamID, buffer, length, flags, source, userData in
        guard let buffer, let flags else { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
        let index = H2ClientStreams.index(from: source?.pointee.ptr)
        return withOwner(userData) {
            $0.readBody(index: index, streamID: streamID, into: buffer, length: length, flags: flags)
        }
    }
}

// The session's side of the callbacks.
extension H2ClientSession {
    @inline(__always)
    func streamIndex(_ streamID: Int32) -> Int? {
        // The table's own map of recent stream ids first: nghttp2's look-up of the stream's user
        // data (a hash map) was two calls per answer.
        if let index = streams.recentIndex(of: streamID) { return index }
        return streamIndexFromNghttp2(streamID)
    }

    @inline(never)
    private func streamIndexFromNghttp2(_ streamID: Int32) -> Int? {
        guard let session else { return nil }
        return streams.index(of: streamID, userData: nghttp2_session_get_stream_user_data(session, streamID))
    }

    /// Small, and inlined into nghttp2's callback: the captured text's copy (its text on the stack,
    /// with a stack guard) lives apart, so `:status`, the other field of every answer, pays for none of it.
    @inline(__always)
    func header(streamID: Int32, name: UnsafePointer<UInt8>, nameLength: Int,
                value: UnsafePointer<UInt8>, valueLength: Int) {
        guard let index = streamIndex(streamID) else { return }
        let stream = streams.state(at: index)
        if H2Wire.equals(name, nameLength, ":status") {
            stream.pointee.noteStatus(valueLength == 3 ? H2Wire.status(value, valueLength) : 0)
        } else if H2Wire.equals(name, nameLength, capturedNames.text, capturedNames.textLength) {
            Self.noteCapturedText(stream, UnsafeBufferPointer(start: value, count: valueLength))
        } else if H2Wire.equals(name, nameLength, "content-length") {
            stream.pointee.noteContentLength(H2Wire.decimal(value, valueLength))
        } else if H2Wire.equals(name, nameLength, capturedNames.uuid, capturedNames.uuidLength) {
            // Only a UUID: anything else is left out rather than written into records.
            stream.pointee.capturedUUID = UUIDBytes(text: UnsafeBufferPointer(start: value, count: valueLength))
        }
    }

    @inline(never)
    private static func noteCapturedText(_ stream: UnsafeMutablePointer<Stream>, _ value: UnsafeBufferPointer<UInt8>) {
        let text = InlineText(value)
        if stream.pointee.hasCapturedText {
            stream.pointee.capturedText = text
        } else {
            // The slot's blank text holds no reference: written over, not destroyed first.
            withUnsafeMutablePointer(to: &stream.pointee.capturedText) { $0.initialize(to: text) }
            stream.pointee.hasCapturedText = true
        }
    }

    func dataChunk(streamID: Int32, data: UnsafePointer<UInt8>, length: Int) {
        guard let index = streamIndex(streamID) else { return }
        let stream = streams.state(at: index)
        stream.pointee.receivedBodyBytes += length
        let room = configuration.maxResponseBodyBytes - stream.pointee.responseBody.count
        guard room > 0 else { return }
        stream.pointee.responseBody.append(contentsOf: UnsafeBufferPointer(start: data, count: min(room, length)))
    }

    func frameReceived(_ frame: UnsafePointer<nghttp2_frame>) {
        let header = frame.pointee.hd
        switch header.type {
        case H2Wire.frameHeaders, H2Wire.frameData:
            if header.flags & H2Wire.flagEndStream != 0 { responseComplete(streamID: header.stream_id) }
        case H2Wire.frameSettings:
            guard header.flags & H2Wire.flagAck == 0 else { return }
            hasReceivedSettings = true
            let current = serverMaxConcurrentStreams
            if current != lastKnownMaxConcurrentStreams {
                lastKnownMaxConcurrentStreams = current
                events.append(.maxConcurrentStreamsChanged(current))
            }
        case H2Wire.frameGoaway:
            let goaway = frame.pointee.goaway
            let goawayEvent = H2GoAway(errorCode: goaway.error_code, lastStreamID: goaway.last_stream_id,
                                       debugData: H2Wire.string(goaway.opaque_data, goaway.opaque_data_len))
            receivedGoaway = goawayEvent
            events.append(.goaway(goawayEvent))
        case H2Wire.framePing:
            if header.flags & H2Wire.flagAck != 0, isPingOutstanding {
                isPingOutstanding = false
                events.append(.pingAcknowledged)
            }
        default:
            break
        }
    }

    private func responseComplete(streamID: Int32) {
        guard let index = streamIndex(streamID) else { return }
        let stream = streams.state(at: index)
        guard !stream.pointee.answered else { return }
        if stream.pointee.isMalformedAtEnd { return malformedResponse(index: index, streamID: streamID) }
        stream.pointee.answered = true
        // The body and the captured text move into the response (no copy, no retain), leaving the
        // slot's blank state behind.
        var body: [UInt8] = []
        swap(&body, &stream.pointee.responseBody)
        let hasCapturedText = stream.pointee.hasCapturedText
        var capturedText = InlineText()
        if hasCapturedText {
            swap(&capturedText, &stream.pointee.capturedText)
            stream.pointee.hasCapturedText = false
        }
        let response = H2Response(tag: stream.pointee.tag, submittedAt: stream.pointee.submittedAt, streamID: streamID,
                                  status: stream.pointee.status, apnsIDValue: consume capturedText, hasAPNsID: hasCapturedText,
                                  uniqueID: stream.pointee.capturedUUID, body: consume body)
        if response.status != 403 { isAuthorized = true }
        events.append(.response(response))
    }

    /// An answer that broke HTTP's rules is a stream error, as nghttp2's own checks made it: the
    /// request's fate is unknown (`.lost`), and the stream is reset if our side is still sending.
    private func malformedResponse(index: Int, streamID: Int32) {
        guard let session else { return }
        streams[index].answered = true
        if nghttp2_session_get_stream_local_close(session, streamID) == 0 {
            _ = nghttp2_submit_rst_stream(session, H2Wire.flagNone, streamID, H2Wire.protocolError)
        }
        events.append(.lost(tag: streams[index].tag, cause: .streamReset(errorCode: H2Wire.protocolError)))
    }

    func requestHeadersSent(streamID: Int32) {
        guard let index = streamIndex(streamID) else { return }
        streams[index].headersSent = true
    }

    func requestNotSent(streamID: Int32) {
        guard let index = streamIndex(streamID) else { return }
        let stream = streams.remove(at: index)
        let cause: H2NotProcessedCause = if let goaway = receivedGoaway, streamID > goaway.lastStreamID {
            .aboveGoawayLastStream
        } else {
            .neverSent
        }
        events.append(.notProcessed(tag: stream.tag, cause: cause))
    }

    func streamClosed(streamID: Int32, errorCode: UInt32) {
        guard let index = streamIndex(streamID) else { return }
        let stream = streams.remove(at: index)
        guard !stream.answered else { return }
        if errorCode == H2Wire.refusedStream {
            let aboveGoaway = receivedGoaway.map { streamID > $0.lastStreamID } ?? false
            events.append(.notProcessed(tag: stream.tag, cause: aboveGoaway ? .aboveGoawayLastStream : .refusedStream))
        } else if !stream.headersSent {
            events.append(.notProcessed(tag: stream.tag, cause: .neverSent))
        } else {
            events.append(.lost(tag: stream.tag, cause: .streamReset(errorCode: errorCode)))
        }
    }

    func readBody(index: Int, streamID: Int32, into buffer: UnsafeMutablePointer<UInt8>, length: Int,
                  flags: UnsafeMutablePointer<UInt32>) -> Int {
        guard streams.holds(index, streamID) else { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
        let stream = streams.state(at: index)
        let offset = stream.pointee.bodyOffset
        let bodyCount = stream.pointee.bodyCount
        let count = min(length, bodyCount - offset)
        stream.pointee.bodyOffset = offset + count
        flags.pointee |= NGHTTP2_DATA_FLAG_NO_COPY.rawValue
        if offset + count == bodyCount { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
        return count
    }

    func sendData(index: Int, streamID: Int32, header: UnsafePointer<UInt8>, length: Int) -> Int32 {
        // Not reached (nghttp2 drops the frame of a closed stream first); a stream error if it were.
        guard streams.holds(index, streamID) else { return Int32(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
        let stream = streams.state(at: index)
        // `readBody` moved the offset past this frame's payload.
        let payload = UnsafeBufferPointer(start: stream.pointee.bodyBase.map { $0 + (stream.pointee.bodyOffset - length) },
                                          count: length)
        switch dataTarget {
        case .tls(let tls):
            tls._withUnsafeGuaranteedRef { tls in
                tls.queueFrameHeader(header)
                if let base = payload.baseAddress, length > 0 { tls.queueOutput(base, count: length) }
            }
        case .array(let output):
            output.pointee.append(contentsOf: UnsafeBufferPointer(start: header, count: H2ClientSession.frameHeaderBytes))
            output.pointee.append(contentsOf: payload)
        case .none:
            return Int32(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue)
        }
        return 0
    }
}
