import CNGHTTP2

/// The part of a request that many requests share, encoded once: the method, a `:path` prefix and
/// header fields with their HPACK rule. A session copies its ready-made `nghttp2_nv` entries into
/// the header block, which point at the template's own bytes, so the fixed part of a request costs
/// one small copy instead of building strings and arrays
/// (`H2ClientSession.submit(template:pathSuffix:headers:body:tag:submittedAt:)`).
///
/// The entries (and the method) carry NGHTTP2_NV_FLAG_NO_COPY_NAME and _VALUE: nghttp2 does not
/// copy their bytes (the JWT alone is ~200 per request) but reads them when it encodes the HEADERS
/// frame, so a session keeps the template of each request alive with the request's stream.
///
/// A sender makes a new one when a header value changes (a fresh provider token every 50 minutes).
// Immutable after init: the pointers are written only there and freed in deinit, so any thread may
// read them.
/// A request's shared part (method, path prefix, headers), encoded once for many requests.
public final class H2RequestTemplate: @unchecked Sendable {
    /// The method's bytes, in storage of their own (nghttp2 reads them without copying).
    let method: UnsafeBufferPointer<UInt8>
    /// The `:path` prefix, in storage of its own (read per request without touching a reference count).
    let pathPrefix: UnsafeBufferPointer<UInt8>
    /// The fields' names and values, back to back; the entries point into it.
    private let storage: UnsafeMutablePointer<UInt8>
    /// The fields as a session's first request sends them, and as every later one does (the
    /// flags differ for `indexedOnFirstRequestOnly`).
    private let firstEntries: UnsafeMutablePointer<nghttp2_nv>
    private let laterEntries: UnsafeMutablePointer<nghttp2_nv>
    /// How many fields, and their bytes in all.
    let fieldCount: Int
    let byteCount: Int
    /// The fields as given, for checks and tests.
    public let headers: [H2Header]
    /// The name of the field that carries each request's suffix instead of `:path` (a broadcast's
    /// `apns-channel-id`: the path is the prefix alone), in storage of its own; empty: none.
    let suffixFieldName: UnsafeBufferPointer<UInt8>
    /// A request's suffix is `suffixField`'s value (indexed on a session's first request only, as
    /// `H2Header.Indexing.indexedOnFirstRequestOnly`), sent after `headers`, not the
    /// end of `:path`.
    public var hasSuffixField: Bool { !suffixFieldName.isEmpty }

    /// Encodes the fields once; `pathPrefix` is completed per request (`/3/device/` + token), or
    /// with `suffixField` the request's suffix is that field's value, after `headers`.
    public init(method: String = "POST", pathPrefix: String, headers: [H2Header], suffixField: String? = nil) {
        let methodStorage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, method.utf8.count))
        _ = methodStorage.initialize(from: method.utf8)
        self.method = UnsafeBufferPointer(rebasing: methodStorage[..<method.utf8.count])
        let prefixStorage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, pathPrefix.utf8.count))
        _ = prefixStorage.initialize(from: pathPrefix.utf8)
        self.pathPrefix = UnsafeBufferPointer(rebasing: prefixStorage[..<pathPrefix.utf8.count])
        self.headers = headers
        let suffixName = Array((suffixField ?? "").utf8)
        let suffixStorage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, suffixName.count))
        _ = suffixStorage.initialize(from: suffixName)
        suffixFieldName = UnsafeBufferPointer(rebasing: suffixStorage[..<suffixName.count])
        let bytes = headers.flatMap { Array($0.name.utf8) + Array($0.value.utf8) }
        byteCount = bytes.count
        fieldCount = headers.count
        storage = .allocate(capacity: max(1, bytes.count))
        storage.initialize(from: bytes, count: bytes.count)
        firstEntries = .allocate(capacity: max(1, headers.count))
        laterEntries = .allocate(capacity: max(1, headers.count))
        var offset = 0
        for (index, header) in headers.enumerated() {
            let nameCount = header.name.utf8.count
            let valueCount = header.value.utf8.count
            func entry(notFirst: Bool) -> nghttp2_nv {
                let neverIndexed = H2HeaderBlock.neverIndexed(header.indexing, notFirst: notFirst)
                return nghttp2_nv(name: storage + offset, value: storage + offset + nameCount,
                                  namelen: nameCount, valuelen: valueCount,
                                  flags: H2HeaderBlock.uncopied | (neverIndexed ? UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue)
                                                                                : UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
            }
            (firstEntries + index).initialize(to: entry(notFirst: false))
            (laterEntries + index).initialize(to: entry(notFirst: true))
            offset += nameCount + valueCount
        }
    }

    deinit {
        UnsafeMutableRawPointer(mutating: method.baseAddress)?.deallocate()
        UnsafeMutableRawPointer(mutating: pathPrefix.baseAddress)?.deallocate()
        UnsafeMutableRawPointer(mutating: suffixFieldName.baseAddress)?.deallocate()
        storage.deallocate()
        firstEntries.deallocate()
        laterEntries.deallocate()
    }

    /// The ready-made entries, valid while the template lives.
    func entries(notFirst: Bool) -> UnsafePointer<nghttp2_nv> {
        UnsafePointer(notFirst ? laterEntries : firstEntries)
    }
}
