/// Why a payload is not a JSON object, and the byte offset (0-based) where that was found.
public struct JSONError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What the validator found wrong; `description` turns it into words for a row's detail.
    public enum Kind: Sendable, Hashable {
        case empty
        case notAnObject
        case unexpectedByte
        case unexpectedEnd
        case controlCharacterInString
        case invalidEscape
        case loneSurrogate
        case invalidUTF8
        case invalidNumber
        case tooDeep
        case trailingData
    }

    /// What was wrong.
    public let kind: Kind
    /// The 0-based byte offset in the payload where it was found.
    public let offset: Int

    /// An error of `kind` at byte `offset` (0-based).
    public init(kind: Kind, offset: Int) {
        self.kind = kind
        self.offset = offset
    }

    /// One line for a `rejected` row's detail, with the 1-based byte position.
    public var description: String {
        let what = switch kind {
        case .empty: "it is empty or only whitespace"
        case .notAnObject: "the top level is not a JSON object (it must start with '{')"
        case .unexpectedByte: "unexpected character"
        case .unexpectedEnd: "it ends in the middle of a value"
        case .controlCharacterInString: "a control character in a string must be escaped"
        case .invalidEscape: "invalid escape in a string"
        case .loneSurrogate: "a \\u surrogate escape without its other half"
        case .invalidUTF8: "invalid UTF-8"
        case .invalidNumber: "invalid number"
        case .tooDeep: "nested deeper than \(Limits.jsonDepth) levels"
        case .trailingData: "more data after the object"
        }
        return "payload is not a JSON object: \(what) at byte \(offset + 1)"
    }
}
