import APNs
import Transport

/// What goes back for a broadcast or channel request: `:status`, `apns-request-id` (echoed or
/// made), `apns-unique-id` (on a broadcast's 200, and on every answer in sandbox), a new channel's
/// `apns-channel-id` (201), and the body: a read's or list's JSON, or `{"reason":…}` for an error.
struct MockBroadcastReply {
    let status: Int
    /// `apns-request-id`: inline (a made one, or an echoed one that fits) or as text.
    let requestID: MockAPNsID
    /// `apns-unique-id`, its hex written in place.
    let uniqueID: H2ResponseField?
    /// A created channel's id, sent back in `apns-channel-id`.
    let createdChannelID: String?
    let body: [UInt8]

    /// The request's own `apns-request-id` (`answer.requestID`), echoed, or a new random one.
    static func requestID(of answer: borrowing MockBroadcastAnswer, random: inout MockRandom) -> MockAPNsID {
        guard let echoed = answer.requestID else {
            return .field(MockAPNsID.generated(using: &random, name: requestIDName))
        }
        return H2ResponseField(name: requestIDName, value: echoed, neverIndexed: true).map { .field($0) }
            ?? .text(echoed)
    }

    private static let requestIDName: StaticString = "apns-request-id"

    /// `answer` borrowed: taken as an owned argument it was copied and destroyed per broadcast.
    init(_ answer: borrowing MockBroadcastAnswer, requestID: MockAPNsID, random: inout MockRandom, sendsUniqueID: Bool) {
        status = answer.status
        self.requestID = requestID
        uniqueID = sendsUniqueID ? MockAPNsID.uniqueID(using: &random) : nil
        createdChannelID = answer.kind == .create && answer.status == 201 ? answer.channelID : nil
        if let reason = answer.reasonText, answer.status >= 300 {
            body = Response.errorBody(reasonText: reason, timestamp: nil)
        } else {
            body = answer.body
        }
    }

    /// The usual answer (a broadcast's: request id and unique id) in inline fields, which allocate
    /// nothing; the others through the general path.
    func send(streamID: Int32, on connection: H2ServerConnection) {
        if case .field(let requestField) = requestID, createdChannelID == nil {
            connection.respond(streamID: streamID, status: status, field: requestField, second: uniqueID, body: body)
            return
        }
        var headers = [H2Header(BroadcastRules.requestIDHeader, requestID.text, indexing: .neverIndexed)]
        if let uniqueID {
            headers.append(H2Header(ResponseHeaderNames.uniqueID, uniqueID.valueText, indexing: .neverIndexed))
        }
        if let createdChannelID {
            headers.append(H2Header(BroadcastRules.channelIDHeader, createdChannelID, indexing: .neverIndexed))
        }
        connection.respond(streamID: streamID, status: status, headers: headers, body: body)
    }
}
