/// A binary provider API error response's status (command 8), with what the sender does about it.
/// Success is silent: the gateway answers only refusals, then closes the connection.
public enum LegacyStatus: UInt8, Sendable, CaseIterable {
    case noErrors = 0
    case processingError = 1
    case missingDeviceToken = 2
    case missingTopic = 3
    case missingPayload = 4
    case invalidTokenSize = 5
    case invalidTopicSize = 6
    case invalidPayloadSize = 7
    case invalidToken = 8
    case shutdown = 10
    case protocolError = 128
    case unknown = 255

    /// The `reason` a row's record carries (Apple's description, in the style of its HTTP/2 reasons).
    public var reasonName: String {
        switch self {
        case .noErrors: "NoErrors"
        case .processingError: "ProcessingError"
        case .missingDeviceToken: "MissingDeviceToken"
        case .missingTopic: "MissingTopic"
        case .missingPayload: "MissingPayload"
        case .invalidTokenSize: "InvalidTokenSize"
        case .invalidTopicSize: "InvalidTopicSize"
        case .invalidPayloadSize: "InvalidPayloadSize"
        case .invalidToken: "InvalidToken"
        case .shutdown: "Shutdown"
        case .protocolError: "ProtocolError"
        case .unknown: "Unknown"
        }
    }

    /// What the status means for the row it names (issue 15): 8 a bad token; 1, 10 and 255 the
    /// gateway's trouble, so the row is sent again; everything else says our frame was wrong,
    /// which retrying cannot fix. (Status 10 names the last row processed, which was accepted:
    /// the sender treats its row as delivered, not by this table.)
    public var disposition: Disposition {
        switch self {
        case .invalidToken: .badToken
        case .processingError, .shutdown, .unknown: .retryLater(.connection)
        case .noErrors: .delivered
        default: .permanent
        }
    }

    /// A status byte as received; an unknown value counts as 255.
    public init(byte: UInt8) {
        self = LegacyStatus(rawValue: byte) ?? .unknown
    }
}

/// The gateway's error response: `u8 8`, `u8 status`, `u32 identifier`.
public struct LegacyErrorResponse: Sendable, Equatable {
    /// The command byte of an error response.
    public static let command: UInt8 = 8
    /// Its fixed size.
    public static let size = 6

    public var status: LegacyStatus
    /// The failed notification's identifier; for `.shutdown`, the last one processed.
    public var identifier: UInt32

    public init(status: LegacyStatus, identifier: UInt32) {
        self.status = status
        self.identifier = identifier
    }

    /// The six bytes on the wire.
    public var bytes: [UInt8] {
        var out: [UInt8] = [Self.command, status.rawValue]
        appendBigEndian(identifier, to: &out)
        return out
    }

    /// The response at the start of `bytes`: nil while fewer than six bytes are there, or when
    /// they are not an error response (`isMalformed` tells those apart).
    public static func parse(_ bytes: ArraySlice<UInt8>) -> LegacyErrorResponse? {
        guard bytes.count >= size, bytes.first == command else { return nil }
        let start = bytes.startIndex
        return LegacyErrorResponse(status: LegacyStatus(byte: bytes[start + 1]),
                                   identifier: readBigEndian32(bytes, at: start + 2))
    }

    /// Bytes that cannot start an error response (another command byte).
    public static func isMalformed(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard let first = bytes.first else { return false }
        return first != command
    }
}
