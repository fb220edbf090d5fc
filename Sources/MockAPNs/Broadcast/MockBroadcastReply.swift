import APNs
import Transport

/// What goes back for a broadcast or channel request: `:status`, `apns-request-id` (echoed or
/// made), `apns-unique-id` (on a broadcast's 200, and on every answer in sandbox), a new channel's
/// `apns-channel-id` (201), and the body: a read's or list's JSON, or `{"reason":…}` for an error.
struct MockBroadcastReply {
    let status: Int
    let headers: [H2Header]
    let body: [UInt8]

    init(_ answer: MockBroadcastAnswer, requestID: String, random: inout MockRandom, sendsUniqueID: Bool) {
        status = answer.status
        var headers = [H2Header(BroadcastRules.requestIDHeader, requestID, indexing: .neverIndexed)]
        if sendsUniqueID {
            headers.append(H2Header(ResponseHeaderNames.uniqueID, MockAPNsID.uniqueID(using: &random).description,
                                    indexing: .neverIndexed))
        }
        if answer.kind == .create, answer.status == 201, let id = answer.channelID {
            headers.append(H2Header(BroadcastRules.channelIDHeader, id, indexing: .neverIndexed))
        }
        if let reason = answer.reasonText, answer.status >= 300 {
            body = Response.errorBody(reasonText: reason, timestamp: nil)
        } else {
            body = answer.body
        }
        self.headers = headers
    }

    func send(streamID: Int32, on connection: H2ServerConnection) {
        connection.respond(streamID: streamID, status: status, headers: headers, body: body)
    }
}
