/// A broadcast row's line of results.jsonl.zst (docs/file-formats.md, "Broadcast records"): the
/// fields of a device push's `ResultLine` under a broadcast's names, `channel_id` for the token and
/// `apns_request_id` for the apns-id, without the ones a broadcast never has (a 410's
/// `unregistered_at`, a duplicate's `duplicate_of`). Written by `ResultLineEncoder`, as every line is.
struct BroadcastResultLine: ResultLineFields {
    /// The row's fields, its `token` the channel id and its `apnsID` the `apns-request-id`.
    var line: ResultLine

    var room: Int { line.room }

    func write<Output: ResultLineOutput>(to out: inout Output) {
        out.literal(#"{"row":"#)
        out.integer(Int64(line.row))
        out.literal(#","channel_id":""#)
        out.textContent(line.token)
        if line.outcome == .delivered && line.status == 200 && line.reason == nil {
            out.literal(#"","outcome":"delivered","status":200,"reason":null,"apns_request_id":"#)
        } else {
            out.literal(#"","outcome":""#)
            out.literal(line.outcome.literalName)
            out.literal(#"","status":"#)
            out.integer(Int64(line.status))
            out.literal(#","reason":"#)
            out.quotedOrNull(line.reason)
            out.literal(#","apns_request_id":"#)
        }
        out.quotedOrNull(line.apnsID)
        out.literal(#","attempts":"#)
        out.integer(Int64(line.attempts))
        out.literal(#","latency_ms":"#)
        if let latencyMs = line.latencyMs { out.milliseconds(latencyMs) } else { out.literal("null") }
        out.literal(#","endpoint":"#)
        out.quotedOrNull(line.endpoint)
        if line.retriedAfterConnectionLoss { out.literal(#","retried_after_connection_loss":true"#) }
        if let uniqueID = line.uniqueID {
            out.literal(#","apns_unique_id":""#)
            uniqueID.withText { out.verbatim($0) }
            out.literal("\"")
        }
        if let labels = line.labels { out.verbatim(labels) }
        out.literal("}\n")
    }
}

extension Outcome {
    /// The outcome's name as a compile-time constant, for `ResultLineOutput.literal`.
    var literalName: StaticString {
        switch self {
        case .delivered: "delivered"
        case .unregistered: "unregistered"
        case .badToken: "bad_token"
        case .failed: "failed"
        case .rejected: "rejected"
        case .gaveUp: "gave_up"
        case .aborted: "aborted"
        }
    }
}
