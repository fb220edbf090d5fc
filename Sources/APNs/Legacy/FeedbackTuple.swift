/// One record of the retired feedback service: `u32 time` (seconds since 1970, when APNs found
/// the app gone), `u16 token length`, the token. The server sends every tuple it has on connect
/// and closes; the provider sends nothing.
public struct FeedbackTuple: Sendable, Equatable {
    /// Seconds since 1970.
    public var time: UInt32
    /// The device token's bytes (32 in practice).
    public var token: [UInt8]

    public init(time: UInt32, token: [UInt8]) {
        self.time = time
        self.token = token
    }

    /// The token as lowercase hex, as a campaign CSV and dead-tokens.csv carry it.
    public var hexToken: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(token.count * 2)
        for byte in token {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Appends the tuple's bytes.
    public func append(to out: inout [UInt8]) {
        appendBigEndian(time, to: &out)
        appendBigEndian(UInt16(token.count), to: &out)
        out.append(contentsOf: token)
    }

    /// Every whole tuple the service sent, and how many bytes at the end were not a whole tuple
    /// (a connection cut mid-tuple: reported, not fatal).
    public static func parseAll(_ bytes: [UInt8]) -> (tuples: [FeedbackTuple], truncatedBytes: Int) {
        var tuples: [FeedbackTuple] = []
        var index = 0
        while bytes.count - index >= 6 {
            let length = Int(bytes[index + 4]) << 8 | Int(bytes[index + 5])
            guard bytes.count - index - 6 >= length else { break }
            let time = readBigEndian32(bytes[...], at: index)
            tuples.append(FeedbackTuple(time: time, token: Array(bytes[index + 6..<index + 6 + length])))
            index += 6 + length
        }
        return (tuples, bytes.count - index)
    }
}
