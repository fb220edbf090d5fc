import ByteScan
import Transport

/// APNs' `apns-id` for a row's answer: its text, or none (a row never answered, or an answer
/// without the header; an empty header is empty text, not none). Written into the row's result
/// line as it came.
///
/// Cost: a row's record travels from a worker through the hand-off queue to the writer, copied a
/// few times, so the id is held as plain memory rather than as an `InlineText?` (copied and
/// destroyed through the runtime's generic enum witnesses, ~100 instructions each, a few times a
/// row) or an `InlineText` (whose copies are calls, ~100 instructions a row): its bytes inline
/// (an APNs id is 36), the rare longer text apart, and whether there was one. The flag goes last,
/// so that the record's next field starts in the padding it leaves: `RowResult` is no wider for
/// holding an id than for three loose fields.
struct APNsID: Sendable {
    private let bytes: InlineBytes
    /// The text when longer than `InlineText.capacity` (no APNs value is).
    private let overflow: String?
    private let present: Bool

    /// No id.
    init() {
        bytes = InlineBytes()
        overflow = nil
        present = false
    }

    /// The id as the answer holds it (`H2Response.apnsIDValue` and `hasAPNsID`).
    @inline(__always)
    init(of response: borrowing H2Response) {
        bytes = response.apnsIDValue.inlineBytes
        overflow = response.apnsIDValue.overflowText
        present = response.hasAPNsID
    }

    /// `text`, or no id.
    init(_ text: InlineText?) {
        bytes = text?.inlineBytes ?? InlineBytes()
        overflow = text?.overflowText
        present = text != nil
    }

    /// The id's text, or nil for none.
    var text: InlineText? { present ? InlineText(bytes, overflow: overflow) : nil }

    /// The id as a `String`, or nil for none.
    var string: String? { text?.description }

    /// Runs `body` with the id's bytes (valid only during the call), or nil for none: read in
    /// place, so a line borrows them without copying the id.
    @inline(__always)
    borrowing func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>?) -> Result) -> Result {
        guard present else { return body(nil) }
        if overflow != nil { return ResultLine.withUTF8(of: overflow, body) }
        return bytes.withUnsafeBytes { body($0.assumingMemoryBound(to: UInt8.self)) }
    }
}
