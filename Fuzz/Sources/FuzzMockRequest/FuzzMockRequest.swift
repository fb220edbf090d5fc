import APNs
import FuzzSupport
@testable import MockAPNs
@testable import Transport

/// The mock's request validation (`MockAPNsRules.answer`, APNs' checks in docs/apns.md's order, the
/// provider-token verifier, the per-token state and faults), for requests on one connection.
///
/// Input: one byte of configuration (bits 0–1: 0 provider tokens verified with `publicKeyPEM`,
/// 1 tokens only looked at, 2–3 client certificates; bit 2: the mock serves `com.example.app`
/// only; bit 3: faults, scripted answers and an unregistered token), then requests separated by
/// NUL bytes. A request is text lines: the method, the path, header fields (`name value`, split at
/// the first space) up to an empty line, then the body. Header bytes go in as received, not UTF-8
/// checked (nghttp2 does not check them either).
///
/// Besides not crashing: an answer's status is one APNs uses, and it has a reason exactly when it
/// is an error.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMockRequest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = opensslWithoutCleanUp
    var input = FuzzInput(data, size)
    let service = MockAPNsRules(configuration: configuration(input.byte()))
    var connection = MockConnectionAuth()
    while !input.isEmpty {
        var request = FuzzInput(Array(input.take(until: 0)))
        let method = String(decoding: request.take(until: newline), as: UTF8.self)
        let path = String(decoding: request.take(until: newline), as: UTF8.self)
        var headers = H2RequestHeaders()
        while !request.isEmpty {
            let line = request.take(until: newline)
            if line.isEmpty { break }
            let name = line.prefix { $0 != space }
            let value = line.dropFirst(name.count + 1)
            Array(name).withUnsafeBufferPointer { name in
                Array(value).withUnsafeBufferPointer { value in
                    headers.append(name: name, value: value, neverIndexed: false)
                }
            }
        }
        let body = Array(request.rest())
        let answer = service.answer(method: method, path: path, headers: headers, body: body, bodyLength: body.count,
                                    connection: &connection, now: issuedAt + 60)
        fuzzCheck(statuses.contains(answer.status), "status \(answer.status)")
        fuzzCheck((answer.reason == nil) == (answer.status == 200 || answer.status == 0),
                  "status \(answer.status) with reason \(String(describing: answer.reason))")
    }
    return 0
}

let newline = UInt8(ascii: "\n")
let space = UInt8(ascii: " ")
let statuses: Set<Int> = [0, 200, 400, 403, 404, 405, 410, 413, 429, 500, 503]

/// When the seed corpus's provider token was issued (its `iat`); requests are answered a minute later.
let issuedAt: Int64 = 1_700_000_000

/// The public half of the key that signed the seed corpus's provider token (kid ABCDE12345,
/// iss TEAM123456); the private half was thrown away.
let publicKeyPEM = """
    -----BEGIN PUBLIC KEY-----
    MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEIr6HldogbPoJfnrqVnYh/mUZ7vrY
    R13d48QiMrq4ymsQuxwYasKM5CVmzYF7Rod+PlPxUDUCAR7owWMVA1UTfQ==
    -----END PUBLIC KEY-----
    """

let verifier = try! TokenVerifier(publicKeyPEM: publicKeyPEM, keyID: .init("ABCDE12345"), teamID: .init("TEAM123456"))

func configuration(_ selector: UInt8) -> MockAPNsConfiguration {
    var configuration = MockAPNsConfiguration()
    switch selector & 3 {
    case 0: configuration.authentication = .token(verifier)
    case 1: configuration.authentication = .tokenPresenceOnly
    default: configuration.authentication = .certificate(.caFile("/nonexistent/ca.pem"))
    }
    if selector & 4 != 0 { configuration.topics = ["com.example.app"] }
    if selector & 8 != 0 {
        let dead = String(repeating: "de", count: 32)
        let scripted = String(repeating: "5c", count: 32)
        configuration.unregistered = [dead: 1_600_000_000_000]
        configuration.scripted = [scripted: .init(status: 400, reason: "BadTopic", times: 1)]
        configuration.failures = [.init(status: 500, rate: 0.1), .init(status: 503, rate: 0.1)]
        configuration.tooManyRequestsRate = 0.1
        configuration.refuseStreamsRate = 0.1
        configuration.seed = UInt64(selector)
    }
    configuration.tokenCacheCapacity = 2
    return configuration
}

/// As apns-bulk's `main` does: OpenSSL's state is kept until exit (no clean-up at exit, which
/// would leave half-freed provider state for LeakSanitizer to report).
let opensslWithoutCleanUp: Void = CryptoLibrary.keepStateUntilExit()
