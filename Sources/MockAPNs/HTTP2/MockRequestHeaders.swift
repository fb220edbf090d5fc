import Transport

/// Where the `authorization` and `apns-*` headers of a request are (field indices), each at most once:
/// a device push's, and a broadcast's or channel request's (`apns-channel-id`, `apns-request-id`).
struct MockRequestHeaders {
    var authorization: Int?
    var topic: Int?
    var pushType: Int?
    var priority: Int?
    var expiration: Int?
    var apnsID: Int?
    var collapseID: Int?
    var channelID: Int?
    var requestID: Int?

    /// False when one of them is repeated (DuplicateHeaders). Names are compared as bytes; no
    /// `String` is made here.
    mutating func collect(_ fields: H2RequestHeaders) -> Bool {
        for index in fields.indices {
            // Pseudo-headers are checked by nghttp2; most names are rejected on the first byte, the
            // others compared only with the names of their length (a broadcast's five fields took
            // twenty comparisons down one chain).
            guard fields.nameFirstByte(at: index) == UInt8(ascii: "a") else { continue }
            let stored: Bool
            switch fields.nameLength(at: index) {
            case 7 where fields.name(at: index, is: "apns-id"): stored = Self.set(&apnsID, index)
            case 10 where fields.name(at: index, is: "apns-topic"): stored = Self.set(&topic, index)
            case 13 where fields.name(at: index, is: "authorization"): stored = Self.set(&authorization, index)
            case 13 where fields.name(at: index, is: "apns-priority"): stored = Self.set(&priority, index)
            case 14 where fields.name(at: index, is: "apns-push-type"): stored = Self.set(&pushType, index)
            case 15 where fields.name(at: index, is: "apns-expiration"): stored = Self.set(&expiration, index)
            case 15 where fields.name(at: index, is: "apns-channel-id"): stored = Self.set(&channelID, index)
            case 15 where fields.name(at: index, is: "apns-request-id"): stored = Self.set(&requestID, index)
            case 16 where fields.name(at: index, is: "apns-collapse-id"): stored = Self.set(&collapseID, index)
            default: continue
            }
            if !stored { return false }
        }
        return true
    }

    private static func set(_ slot: inout Int?, _ index: Int) -> Bool {
        guard slot == nil else { return false }
        slot = index
        return true
    }
}
