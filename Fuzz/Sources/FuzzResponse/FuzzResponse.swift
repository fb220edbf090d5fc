import APNs
import FuzzSupport
import Pipeline
import Transport

/// What a server sends back, read the way `send` reads it. Two kinds of input (bit 0 of the first
/// byte):
/// - 0, the wire: the rest is what an HTTP/2 server sent, cut into reads (each a length byte, then
///   up to that many bytes). A client session submits a request whenever it has a free stream
///   slot, takes each read, and at the end its connection is dropped (`terminate`). Every answer
///   becomes a `Response` and a retry decision, every GOAWAY's debug data too; and every request
///   submitted must end in exactly one event (`.response`, `.notProcessed` or `.lost`), whatever
///   the server sent: that is what lets a campaign account for each row.
/// - 1, an answer's parts: two bytes of status (big-endian), a length byte and that many bytes of
///   `apns-id`, then the body, straight into `Response(status:apnsID:body:)`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzResponse(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = opensslWithoutCleanUp
    var input = FuzzInput(data, size)
    if input.byte() & 1 == 1 {
        let status = Int(input.byte()) << 8 | Int(input.byte())
        let apnsID = String(decoding: input.take(Int(input.byte())), as: UTF8.self)
        settle(Response(status: status, apnsID: apnsID, body: input.rest()))
    } else {
        wire(&input)
    }
    return 0
}

/// Decodes nothing further than `send` does: the disposition and the retry policy's action.
func settle(_ response: Response) {
    var policy = RetryPolicy(maxAttempts: 3, baseMilliseconds: 10, capMilliseconds: 100, seed: 1)
    _ = policy.decide(response.disposition, attempts: 1, expiration: 0, nowMilliseconds: 0)
    if let reason = response.reason { fuzzCheck(reason.name == response.reasonText, "reason \(reason) from \(String(describing: response.reasonText))") }
}

func wire(_ input: inout FuzzInput) {
    guard let session = try? H2ClientSession(configuration: .init(
        authority: "api.push.apple.com", maxStreams: 4,
        capturedHeaders: H2CapturedHeaders(text: ResponseHeaderNames.apnsID, uuid: ResponseHeaderNames.uniqueID))) else {
        fuzzCheck(false, "no client session")
        return
    }
    var submitted: [UInt64] = []
    var ended: [UInt64: Int] = [:]
    var output: [UInt8] = []
    func collect() {
        session.drainEvents { event in
            switch event {
            case .response(let response):
                ended[response.tag, default: 0] += 1
                settle(Response(status: response.status, apnsID: response.apnsID, body: response.body))
            case .notProcessed(let tag, _), .lost(let tag, _):
                ended[tag, default: 0] += 1
            case .goaway(let goaway):
                settle(Response(status: 0, apnsID: nil, body: Array(goaway.debugData.utf8)))
            case .pingAcknowledged, .maxConcurrentStreamsChanged:
                break
            }
        }
    }
    let token = String(repeating: "ab", count: 32)
    let headers = [H2Header("apns-topic", "com.example.app"), H2Header("apns-push-type", "alert")]
    let body = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
    var tag: UInt64 = 0
    while !input.isEmpty {
        if tag < 64, let _ = try? session.submit(path: "/3/device/\(token)", headers: headers, body: body, tag: tag) {
            submitted.append(tag)
            tag += 1
        }
        output.removeAll(keepingCapacity: true)
        do {
            try session.drainOutput(into: &output)
            try session.receive(input.take(Int(input.byte())))
        } catch {
            break
        }
        collect()
    }
    session.terminate()
    collect()
    for tag in submitted {
        fuzzCheck(ended[tag] == 1, "request \(tag) ended \(ended[tag] ?? 0) times")
    }
    fuzzCheck(ended.count == submitted.count, "events for \(ended.count) requests, \(submitted.count) submitted")
}

/// As apns-bulk's `main` does: OpenSSL's state is kept until exit (no clean-up at exit, which
/// would leave half-freed provider state for LeakSanitizer to report).
let opensslWithoutCleanUp: Void = CryptoLibrary.keepStateUntilExit()
