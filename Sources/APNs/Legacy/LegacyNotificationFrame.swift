/// The binary provider API's notification (command 2), which Apple retired in 2021 but gateways
/// and in-house relays still speak: `u8 2`, `u32 frame length`, then items (`u8 id`, `u16
/// length`, data), all big-endian. The sender encodes it; the mock parses it back.
public struct LegacyNotificationFrame: Sendable, Equatable {
    /// The command byte of a notification frame.
    public static let command: UInt8 = 2
    /// The device token's size: the binary API knows only 32-byte tokens.
    public static let tokenBytes = 32
    /// The largest payload the binary API accepts.
    public static let payloadBytes = 2048
    /// A frame longer than this is not a notification: the parser calls it a protocol error
    /// instead of waiting for bytes that will not come.
    public static let maxFrameLength = 4096

    /// The item ids of a command-2 frame.
    public enum Item: UInt8, Sendable {
        case deviceToken = 1, payload = 2, identifier = 3, expiration = 4, priority = 5
    }

    /// Item 1; nil when the frame had none.
    public var deviceToken: [UInt8]?
    /// Item 2; nil when the frame had none.
    public var payload: [UInt8]?
    /// Item 3, opaque to the server and echoed in its error response.
    public var identifier: UInt32
    /// Item 4: seconds since 1970, 0 to store nothing.
    public var expiration: UInt32
    /// Item 5: 10 or 5.
    public var priority: UInt8

    /// A frame's fields (the encoder's tests and the mock build them this way).
    public init(deviceToken: [UInt8]?, payload: [UInt8]?, identifier: UInt32, expiration: UInt32 = 0, priority: UInt8 = 10) {
        self.deviceToken = deviceToken
        self.payload = payload
        self.identifier = identifier
        self.expiration = expiration
        self.priority = priority
    }

    /// Appends one frame with all five items. `token` is the device token's 64 hex digits
    /// (checked by the caller: `LegacyNotificationFrame.tokenBytes` when decoded).
    public static func append(hexToken token: ArraySlice<UInt8>, payload: ArraySlice<UInt8>, identifier: UInt32,
                              expiration: UInt32, priority: UInt8, to out: inout [UInt8]) {
        let tokenLength = token.count / 2
        let length = 3 + tokenLength + 3 + payload.count + 3 + 4 + 3 + 4 + 3 + 1
        out.append(command)
        appendBigEndian(UInt32(length), to: &out)
        out.append(Item.deviceToken.rawValue)
        appendBigEndian(UInt16(tokenLength), to: &out)
        var index = token.startIndex
        while index + 1 < token.endIndex {
            out.append(hexValue(token[index]) << 4 | hexValue(token[index + 1]))
            index += 2
        }
        out.append(Item.payload.rawValue)
        appendBigEndian(UInt16(payload.count), to: &out)
        out.append(contentsOf: payload)
        out.append(Item.identifier.rawValue)
        appendBigEndian(UInt16(4), to: &out)
        appendBigEndian(identifier, to: &out)
        out.append(Item.expiration.rawValue)
        appendBigEndian(UInt16(4), to: &out)
        appendBigEndian(expiration, to: &out)
        out.append(Item.priority.rawValue)
        appendBigEndian(UInt16(1), to: &out)
        out.append(priority)
    }

    /// This frame's bytes (items it lacks are left out).
    public var bytes: [UInt8] {
        var items: [UInt8] = []
        func item(_ id: Item, _ data: [UInt8]) {
            items.append(id.rawValue)
            appendBigEndian(UInt16(data.count), to: &items)
            items.append(contentsOf: data)
        }
        if let deviceToken { item(.deviceToken, deviceToken) }
        if let payload { item(.payload, payload) }
        var number: [UInt8] = []
        appendBigEndian(identifier, to: &number)
        item(.identifier, number)
        number.removeAll()
        appendBigEndian(expiration, to: &number)
        item(.expiration, number)
        item(.priority, [priority])
        var out: [UInt8] = [Self.command]
        appendBigEndian(UInt32(items.count), to: &out)
        return out + items
    }

    /// What the start of a byte stream holds.
    public enum Parsed: Sendable, Equatable {
        /// A whole frame, `consumed` bytes long.
        case frame(LegacyNotificationFrame, consumed: Int)
        /// Not enough bytes yet.
        case incomplete
        /// Not a command-2 frame (another command, a frame too long, an item overrunning it):
        /// the server answers status 128 with the identifier it could read (0 otherwise).
        case protocolError(identifier: UInt32)
    }

    /// Parses the frame at the start of `bytes`.
    public static func parse(_ bytes: ArraySlice<UInt8>) -> Parsed {
        guard let first = bytes.first else { return .incomplete }
        guard first == command else { return .protocolError(identifier: 0) }
        guard bytes.count >= 5 else { return .incomplete }
        let start = bytes.startIndex
        let length = Int(readBigEndian32(bytes, at: start + 1))
        guard length <= maxFrameLength else { return .protocolError(identifier: 0) }
        guard bytes.count >= 5 + length else { return .incomplete }
        var frame = LegacyNotificationFrame(deviceToken: nil, payload: nil, identifier: 0)
        var index = start + 5
        let end = index + length
        while index < end {
            guard end - index >= 3 else { return .protocolError(identifier: frame.identifier) }
            let id = bytes[index]
            let itemLength = Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
            index += 3
            guard end - index >= itemLength else { return .protocolError(identifier: frame.identifier) }
            let data = bytes[index..<index + itemLength]
            switch Item(rawValue: id) {
            case .deviceToken: frame.deviceToken = Array(data)
            case .payload: frame.payload = Array(data)
            case .identifier where itemLength == 4: frame.identifier = readBigEndian32(data, at: data.startIndex)
            case .expiration where itemLength == 4: frame.expiration = readBigEndian32(data, at: data.startIndex)
            case .priority where itemLength == 1: frame.priority = data[data.startIndex]
            default: return .protocolError(identifier: frame.identifier)
            }
            index += itemLength
        }
        return .frame(frame, consumed: 5 + length)
    }

    /// The status the binary gateway answers this frame with (APNs' item rules, in its order),
    /// or nil when it is accepted.
    public var refusal: LegacyStatus? {
        guard let deviceToken else { return .missingDeviceToken }
        guard deviceToken.count == Self.tokenBytes else { return .invalidTokenSize }
        guard let payload, !payload.isEmpty else { return .missingPayload }
        guard payload.count <= Self.payloadBytes else { return .invalidPayloadSize }
        guard priority == 10 || priority == 5 else { return .processingError }
        return nil
    }

    private static func hexValue(_ digit: UInt8) -> UInt8 {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: 0
        }
    }
}

/// `value` as big-endian bytes (the binary API's byte order).
func appendBigEndian<Value: FixedWidthInteger>(_ value: Value, to out: inout [UInt8]) {
    var shift = Value.bitWidth - 8
    while shift >= 0 {
        out.append(UInt8(truncatingIfNeeded: value >> shift))
        shift -= 8
    }
}

/// The big-endian u32 at `index` (the caller checked that four bytes are there).
func readBigEndian32(_ bytes: ArraySlice<UInt8>, at index: Int) -> UInt32 {
    UInt32(bytes[index]) << 24 | UInt32(bytes[index + 1]) << 16 | UInt32(bytes[index + 2]) << 8 | UInt32(bytes[index + 3])
}
