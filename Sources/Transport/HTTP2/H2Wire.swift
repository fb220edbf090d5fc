import CNGHTTP2

/// The parts of driving an `nghttp2_session*` that client and server share: feeding received bytes,
/// draining output, comparing header names. Internal: the raw pointers stay inside Transport.
enum H2Wire {
    /// Feeds all of `bytes` to nghttp2: the count consumed, or a negative (fatal) nghttp2 error code.
    static func receive(_ session: OpaquePointer, _ bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return 0 }
        return nghttp2_session_mem_recv(session, base.assumingMemoryBound(to: UInt8.self), bytes.count)
    }

    /// Appends everything nghttp2 has to send to `buffer`, stopping once `buffer` holds `limit` bytes
    /// or more (the rest stays queued in nghttp2: `wantsWrite` stays true). Returns the bytes appended.
    static func drainOutput(_ session: OpaquePointer, into buffer: inout [UInt8], limit: Int) throws(H2Error) -> Int {
        try drain(session, while: { buffer.count < limit }) { buffer.append(contentsOf: UnsafeBufferPointer(start: $0, count: $1)) }
    }

    /// `drainOutput` into a TLS session's queue, stopping once `limit` bytes wait there: each
    /// chunk is one memcpy into the queue.
    static func drainOutput(_ session: OpaquePointer, into tls: TLSSession, limit: Int) throws(H2Error) -> Int {
        try drain(session, while: { tls.pendingOutputCount < limit }) { tls.queueOutput($0, count: $1) }
    }

    /// nghttp2's output chunk by chunk into `sink` while `hasRoom`; the bytes handed over.
    @inline(__always)
    private static func drain(_ session: OpaquePointer, while hasRoom: () -> Bool,
                              _ sink: (UnsafePointer<UInt8>, Int) -> Void) throws(H2Error) -> Int {
        var appended = 0
        while hasRoom() {
            var chunk: UnsafePointer<UInt8>? = nil
            let length = nghttp2_session_mem_send(session, &chunk)
            if length < 0 { throw H2Error(nghttp2Code: length) }
            guard length > 0, let chunk else { break }
            sink(chunk, length)
            appended += length
        }
        return appended
    }

    static func check(_ result: Int32) throws(H2Error) {
        if result < 0 { throw H2Error(nghttp2Code: Int(result)) }
    }

    /// Whether the `length` bytes at `bytes` spell `name` (ASCII, already lowercase on the wire).
    @inline(__always)
    static func equals(_ bytes: UnsafePointer<UInt8>, _ length: Int, _ name: StaticString) -> Bool {
        equals(bytes, length, name.utf8Start, name.utf8CodeUnitCount)
    }

    /// Whether the `length` bytes at `bytes` are the `nameLength` bytes at `name` (never, when
    /// `nameLength` is negative).
    @inline(__always)
    static func equals(_ bytes: UnsafePointer<UInt8>, _ length: Int, _ name: UnsafePointer<UInt8>, _ nameLength: Int) -> Bool {
        guard length == nameLength else { return false }
        // Two overlapping word loads per side for 4 to 16 bytes (header names are short): a byte
        // loop was ~4 instructions a byte, on every field of every answer.
        let actual = UnsafeRawPointer(bytes), expected = UnsafeRawPointer(name)
        if length >= 8 && length <= 16 {
            return actual.loadUnaligned(as: UInt64.self) == expected.loadUnaligned(as: UInt64.self)
                && actual.loadUnaligned(fromByteOffset: length - 8, as: UInt64.self)
                == expected.loadUnaligned(fromByteOffset: length - 8, as: UInt64.self)
        }
        if length >= 4 && length < 8 {
            return actual.loadUnaligned(as: UInt32.self) == expected.loadUnaligned(as: UInt32.self)
                && actual.loadUnaligned(fromByteOffset: length - 4, as: UInt32.self)
                == expected.loadUnaligned(fromByteOffset: length - 4, as: UInt32.self)
        }
        for index in 0..<length where bytes[index] != name[index] { return false }
        return true
    }

    @inline(__always)
    static func string(_ bytes: UnsafePointer<UInt8>?, _ length: Int) -> String {
        guard let bytes, length > 0 else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self)
    }

    /// A three-digit decimal status such as `200`; 0 when the bytes are not one.
    @inline(__always)
    static func status(_ bytes: UnsafePointer<UInt8>, _ length: Int) -> Int {
        var value = 0
        for index in 0..<length {
            let digit = Int(bytes[index]) - 48
            guard digit >= 0, digit <= 9 else { return 0 }
            value = value * 10 + digit
        }
        return value
    }

    /// A decimal number such as a `content-length`; -2 when the bytes are not one (-1 means "none").
    @inline(__always)
    static func decimal(_ bytes: UnsafePointer<UInt8>, _ length: Int) -> Int {
        guard length > 0, length <= 18 else { return -2 }
        var value = 0
        for index in 0..<length {
            let digit = Int(bytes[index]) - 48
            guard digit >= 0, digit <= 9 else { return -2 }
            value = value * 10 + digit
        }
        return value
    }

    static let frameHeaders = UInt8(NGHTTP2_HEADERS.rawValue)
    static let frameData = UInt8(NGHTTP2_DATA.rawValue)
    static let framePriority = UInt8(NGHTTP2_PRIORITY.rawValue)
    static let frameRstStream = UInt8(NGHTTP2_RST_STREAM.rawValue)
    static let frameSettings = UInt8(NGHTTP2_SETTINGS.rawValue)
    static let framePing = UInt8(NGHTTP2_PING.rawValue)
    static let frameGoaway = UInt8(NGHTTP2_GOAWAY.rawValue)
    static let flagEndStream = UInt8(NGHTTP2_FLAG_END_STREAM.rawValue)
    static let flagAck = UInt8(NGHTTP2_FLAG_ACK.rawValue)
    static let flagPriority = UInt8(NGHTTP2_FLAG_PRIORITY.rawValue)
    static let flagNone = UInt8(NGHTTP2_FLAG_NONE.rawValue)
    static let nvNoIndex = UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue)
    static let refusedStream = NGHTTP2_REFUSED_STREAM.rawValue
    static let protocolError = NGHTTP2_PROTOCOL_ERROR.rawValue
}

/// Settings entries for `nghttp2_submit_settings`.
struct H2Setting {
    var id: nghttp2_settings_id
    var value: UInt32
}

extension H2Wire {
    static func submitSettings(_ session: OpaquePointer, _ settings: [H2Setting]) throws(H2Error) {
        var entries = settings.map { nghttp2_settings_entry(settings_id: Int32($0.id.rawValue), value: $0.value) }
        let result = entries.withUnsafeMutableBufferPointer {
            nghttp2_submit_settings(session, flagNone, $0.baseAddress, $0.count)
        }
        try check(result)
    }
}
