import Transport

/// A client and a server session wired back to back in memory: `pump()` moves bytes both ways and
/// collects events until neither side has anything more to say.
final class H2TestPair {
    struct Answer {
        var status: Int
        var headers: [H2Header] = []
        var body: [UInt8] = []
    }

    let client: H2ClientSession
    let server: H2ServerSession
    var clientEvents: [H2ClientEvent] = []
    var requests: [H2ServerRequest] = []
    var serverEvents: [H2ServerEvent] = []
    /// Answers each request as it arrives; nil leaves it unanswered.
    var answer: ((H2ServerRequest) -> Answer?)?
    private var clientOutput: [UInt8] = []
    private var serverOutput: [UInt8] = []

    init(client: H2ClientSession.Configuration = .init(authority: "api.push.apple.com", maxStreams: 100, capturedHeaders: .apns),
         server: H2ServerSession.Configuration = .init(maxConcurrentStreams: 1000)) throws {
        self.client = try H2ClientSession(configuration: client)
        self.server = try H2ServerSession(configuration: server)
    }

    /// Moves bytes until both sides are idle.
    func pump(maxRounds: Int = 10_000) throws {
        for _ in 0..<maxRounds {
            clientOutput.removeAll(keepingCapacity: true)
            try client.drainOutput(into: &clientOutput, limit: .max)
            if !clientOutput.isEmpty { try server.receive(clientOutput) }
            var serverHadEvents = false
            server.drainEvents { event in
                serverHadEvents = true
                serverEvents.append(event)
                guard case .request(let request) = event else { return }
                requests.append(request)
                if let reply = answer?(request) {
                    _ = try? server.respond(streamID: request.streamID, status: reply.status,
                                            headers: reply.headers, body: reply.body)
                }
            }
            serverOutput.removeAll(keepingCapacity: true)
            try server.drainOutput(into: &serverOutput, limit: .max)
            if !serverOutput.isEmpty { try client.receive(serverOutput) }
            var clientHadEvents = false
            client.drainEvents { clientHadEvents = true; clientEvents.append($0) }
            if clientOutput.isEmpty, serverOutput.isEmpty, !serverHadEvents, !clientHadEvents { return }
        }
    }

    /// Submits a typical APNs request tagged `tag`.
    @discardableResult
    func submit(tag: UInt64, token: String = String(repeating: "ab", count: 32), apnsID: String? = nil,
                body: [UInt8] = Array(#"{"aps":{"alert":"hi"}}"#.utf8)) throws -> Int32 {
        var headers = [
            H2Header("authorization", "bearer eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyMzQ1NjcifQ.e30.c2ln", rules: .apns),
            H2Header("apns-push-type", "alert", rules: .apns),
            H2Header("apns-topic", "com.example.app", rules: .apns),
        ]
        if let apnsID { headers.append(H2Header("apns-id", apnsID, rules: .apns)) }
        return try client.submit(path: "/3/device/\(token)", headers: headers, body: body, tag: tag, submittedAt: tag)
    }

    var responses: [H2Response] {
        clientEvents.compactMap { if case .response(let response) = $0 { response } else { nil } }
    }

    var notProcessed: [(tag: UInt64, cause: H2NotProcessedCause)] {
        clientEvents.compactMap { if case .notProcessed(let tag, let cause) = $0 { (tag, cause) } else { nil } }
    }

    var lost: [(tag: UInt64, cause: H2LossCause)] {
        clientEvents.compactMap { if case .lost(let tag, let cause) = $0 { (tag, cause) } else { nil } }
    }
}

extension H2CapturedHeaders {
    /// What an APNs client keeps of each answer, as the sender names it.
    static let apns = H2CapturedHeaders(text: "apns-id", uuid: "apns-unique-id")
}

extension H2Header.IndexingRules {
    /// Apple's HPACK guidance, as an APNs client passes it (APNs' `HPACKGuidance`).
    static let apns = H2Header.IndexingRules(neverIndexed: ["authorization"],
                                             indexedOnFirstRequestOnly: ["apns-id", "apns-expiration", "apns-collapse-id"])
}
