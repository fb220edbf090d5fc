@testable import APNs
import ByteScan
import FuzzSupport

/// The RFC 8259 validator every payload goes through, and the APNs error-body reader built on it.
/// Besides not crashing: `isJSONObject` agrees with `validate` and the first byte, an error's offset
/// lies within the input, any body the reader accepts survives `encoded()` and a second read, and
/// the portable block tests (`SWARBlocks`, other machines' path) give the native verdict. The Live
/// Activity rules' reader (`LiveActivityPayload`) reads any bytes without reading past them.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let error = JSONValidator.validate(bytes)
    let isObject = JSONValidator.isJSONObject(bytes)
    if isObject { fuzzCheck(error == nil, "isJSONObject accepted what validate refused: \(String(describing: error))") }
    if let error { fuzzCheck(error.offset >= 0 && error.offset <= size, "error offset \(error.offset) outside \(size) bytes") }
    let portable = JSONValidator.validate(buffer: bytes, using: SWARBlocks.self)
    fuzzCheck(portable == error, "SWAR blocks: \(String(describing: portable)), native: \(String(describing: error))")

    if let body = ErrorBody(decoding: bytes) {
        fuzzCheck(error == nil, "ErrorBody read a body the validator refuses")
        let again = ErrorBody(decoding: body.encoded())
        fuzzCheck(again == body, "ErrorBody round trip: \(body) became \(String(describing: again))")
    }
    _ = LiveActivityPayload(buffer: bytes).brokenRule(route: .deviceToken)
    return 0
}
