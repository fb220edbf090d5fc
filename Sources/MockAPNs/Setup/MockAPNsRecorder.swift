import ZstdFile

/// `--record-out F.jsonl.zst`: one JSON object per request, appended as bytes (no Foundation),
/// compressed by `ZstdFrameWriter` into a frame per flush. The server flushes it every second and
/// at stop. Reactor thread only.
final class MockAPNsRecorder {
    private let writer: ZstdFrameWriter
    private(set) var failure: ZstdWriteError?

    init(path: String) throws(MockAPNsError) {
        do {
            writer = try ZstdFrameWriter(path: path)
        } catch {
            throw .flag(name: "--record-out", value: path, problem: error.description)
        }
    }

    /// `{"time_ms":…,"connection":…,"stream":…,"device_token":"…","apns_id":"…","status":…,"reason":…}`;
    /// status 0 with reason "RefusedStream" for a refused stream.
    /// `keyID`, the signing key whose token verified (token auth with keys to verify), adds
    /// `"key_id":"…"` after `reason`.
    /// `payload`, given with `--record-payloads`, adds `"payload":"…"` (the body as a JSON string).
    func record(timeMilliseconds: Int64, connection: UInt64, stream: Int32, deviceToken: Substring,
                apnsID: String, status: Int, reason: String?, keyID: String? = nil, payload: [UInt8]? = nil) {
        guard failure == nil else { return }
        writer.withAppendedBytes { out in
            out.append(contentsOf: "{\"time_ms\":".utf8)
            appendDecimal(timeMilliseconds, to: &out)
            out.append(contentsOf: ",\"connection\":".utf8)
            appendDecimal(Int64(connection), to: &out)
            out.append(contentsOf: ",\"stream\":".utf8)
            appendDecimal(Int64(stream), to: &out)
            out.append(contentsOf: ",\"device_token\":".utf8)
            appendJSONString(deviceToken.utf8, to: &out)
            out.append(contentsOf: ",\"apns_id\":".utf8)
            appendJSONString(apnsID.utf8, to: &out)
            out.append(contentsOf: ",\"status\":".utf8)
            appendDecimal(Int64(status), to: &out)
            out.append(contentsOf: ",\"reason\":".utf8)
            if let reason { appendJSONString(reason.utf8, to: &out) } else { out.append(contentsOf: "null".utf8) }
            if let keyID {
                out.append(contentsOf: ",\"key_id\":".utf8)
                appendJSONString(keyID.utf8, to: &out)
            }
            if let payload {
                out.append(contentsOf: ",\"payload\":".utf8)
                appendJSONString(payload, to: &out)
            }
            out.append(contentsOf: "}\n".utf8)
        }
    }

    func flush() {
        // The flush timer may fire between the server's stop and its reactor's end.
        guard failure == nil, !isClosed else { return }
        do { try writer.flush() } catch { failure = error }
    }

    func close() {
        guard failure == nil, !isClosed else { return }
        isClosed = true
        do { try writer.close() } catch { failure = error }
    }

    private var isClosed = false
}

func appendDecimal(_ value: Int64, to out: inout [UInt8]) {
    if value < 0 {
        out.append(UInt8(ascii: "-"))
        appendDecimal(UInt64(value.magnitude), to: &out)
    } else {
        appendDecimal(UInt64(value), to: &out)
    }
}

func appendDecimal(_ value: UInt64, to out: inout [UInt8]) {
    if value >= 10 { appendDecimal(value / 10, to: &out) }
    out.append(UInt8(ascii: "0") &+ UInt8(value % 10))
}

/// A JSON string of bytes that are already UTF-8; quotes, backslashes and controls escaped.
func appendJSONString(_ bytes: some Collection<UInt8>, to out: inout [UInt8]) {
    out.append(UInt8(ascii: "\""))
    for byte in bytes {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"):
            out.append(UInt8(ascii: "\\"))
            out.append(byte)
        case 0..<0x20:
            out.append(contentsOf: "\\u00".utf8)
            out.append(hexDigit(byte >> 4))
            out.append(hexDigit(byte & 0x0f))
        default:
            out.append(byte)
        }
    }
    out.append(UInt8(ascii: "\""))
}

@inline(__always)
func hexDigit(_ nibble: UInt8) -> UInt8 {
    nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "a") &+ nibble &- 10
}
