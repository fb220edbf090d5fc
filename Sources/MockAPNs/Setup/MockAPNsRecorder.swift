import Synchronization
import ZstdFile

/// `--record-out F.jsonl.zst`: one JSON object per request, appended as bytes (no Foundation),
/// compressed by `ZstdFrameWriter` into a frame per flush. The server flushes it every second and
/// at stop. Written by the push listener's reactor thread and, with `--management-listen`, by the
/// management listener's (uncontended with one listener).
/// @unchecked Sendable: shared by the listeners' reactor threads, its state touched only behind `lock`.
final class MockAPNsRecorder: @unchecked Sendable {
    private let lock = Mutex<Void>(())
    private let writer: ZstdFrameWriter
    private var firstFailure: ZstdWriteError?
    private var isClosed = false

    init(path: String) throws(MockAPNsError) {
        do {
            writer = try ZstdFrameWriter(path: path)
        } catch {
            throw .flag(name: "--record-out", value: path, problem: error.description)
        }
    }

    /// The first write failure, which stops the record.
    var failure: ZstdWriteError? { lock.withLock { _ in firstFailure } }

    /// `{"time_ms":…,"connection":…,"stream":…,"device_token":"…","apns_id":"…","status":…,"reason":…}`;
    /// status 0 with reason "RefusedStream" for a refused stream.
    /// `keyID`, the signing key whose token verified (token auth with keys to verify), adds
    /// `"key_id":"…"` after `reason`.
    /// `payload`, given with `--record-payloads`, adds `"payload":"…"` (the body as a JSON string).
    func record(timeMilliseconds: Int64, connection: UInt64, stream: Int32, deviceToken: Substring,
                apnsID: String, status: Int, reason: String?, keyID: String? = nil, payload: [UInt8]? = nil) {
        appendLine(timeMilliseconds: timeMilliseconds, connection: connection, stream: stream) { out in
            out.append(contentsOf: ",\"device_token\":".utf8)
            appendJSONString(deviceToken.utf8, to: &out)
            out.append(contentsOf: ",\"apns_id\":".utf8)
            appendJSONString(apnsID.utf8, to: &out)
            Self.appendOutcome(status: status, reason: reason, keyID: keyID, payload: payload, to: &out)
        }
    }

    /// A broadcast or channel request: `{"time_ms":…,"connection":…,"stream":…,"kind":"broadcast",
    /// "bundle_id":"…","channel_id":"…","apns_request_id":"…","status":…,"reason":…}` (kind
    /// `channel-create`, `channel-read`, `channel-delete`, `channel-list` for the management requests,
    /// `other` for a path or method no endpoint takes; `channel_id` the request's, or the one a create made; null when none),
    /// then `key_id` and `payload` as for a device push.
    func recordBroadcast(timeMilliseconds: Int64, connection: UInt64, stream: Int32, kind: String, bundleID: Substring,
                         channelID: String?, requestID: String, status: Int, reason: String?, keyID: String? = nil,
                         payload: [UInt8]? = nil) {
        appendLine(timeMilliseconds: timeMilliseconds, connection: connection, stream: stream) { out in
            out.append(contentsOf: ",\"kind\":".utf8)
            appendJSONString(kind.utf8, to: &out)
            out.append(contentsOf: ",\"bundle_id\":".utf8)
            appendJSONString(bundleID.utf8, to: &out)
            out.append(contentsOf: ",\"channel_id\":".utf8)
            if let channelID { appendJSONString(channelID.utf8, to: &out) } else { out.append(contentsOf: "null".utf8) }
            out.append(contentsOf: ",\"apns_request_id\":".utf8)
            appendJSONString(requestID.utf8, to: &out)
            Self.appendOutcome(status: status, reason: reason, keyID: keyID, payload: payload, to: &out)
        }
    }

    private func appendLine(timeMilliseconds: Int64, connection: UInt64, stream: Int32,
                            _ fields: (inout [UInt8]) -> Void) {
        lock.withLock { _ in
            guard firstFailure == nil, !isClosed else { return }
            writer.withAppendedBytes { out in
                out.append(contentsOf: "{\"time_ms\":".utf8)
                appendDecimal(timeMilliseconds, to: &out)
                out.append(contentsOf: ",\"connection\":".utf8)
                appendDecimal(Int64(connection), to: &out)
                out.append(contentsOf: ",\"stream\":".utf8)
                appendDecimal(Int64(stream), to: &out)
                fields(&out)
                out.append(contentsOf: "}\n".utf8)
            }
        }
    }

    private static func appendOutcome(status: Int, reason: String?, keyID: String?, payload: [UInt8]?,
                                      to out: inout [UInt8]) {
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
    }

    func flush() {
        // The flush timer may fire between the server's stop and its reactor's end.
        lock.withLock { _ in
            guard firstFailure == nil, !isClosed else { return }
            do throws(ZstdWriteError) { try writer.flush() } catch { firstFailure = error }
        }
    }

    func close() {
        lock.withLock { _ in
            guard firstFailure == nil, !isClosed else { return }
            isClosed = true
            do throws(ZstdWriteError) { try writer.close() } catch { firstFailure = error }
        }
    }
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
