import CNGHTTP2

// Submitting requests: the header block (copied from a template on the hot path), the stream's
// record and nghttp2's submit, and the submission order the response timeout reads.

extension H2ClientSession {
    /// Submits `method path` with `headers` and `body`, to be matched by `tag` in its ending event.
    ///
    /// `:scheme` is https and `:authority` the configured one; `:path` is sent never-indexed, each header
    /// by its `indexing`. No PRIORITY information is ever sent. The session keeps `body` (a reference,
    /// not a copy) until the stream's DATA is written. `submittedAt` is the caller's monotonic clock
    /// reading (non-decreasing across submits), returned in the response and by
    /// `oldestInFlightSubmittedAt()`. Returns the stream id.
    @discardableResult
    public func submit(path: String, headers: [H2Header], body: [UInt8], tag: UInt64,
                       submittedAt: UInt64 = 0, method: String = "POST") throws(H2Error) -> Int32 {
        guard session != nil else { throw .terminated }
        // `freeStreamSlots` is 0 when no request is accepted: asking `acceptsRequests` first, every
        // time, was a second call into nghttp2 per request.
        guard freeStreamSlots > 0 else { throw acceptsRequests ? .noFreeStreamSlot : .notAcceptingRequests }

        fillHeaderBlock(method: method, path: path, headers: headers)
        let index = streams.insert(tag: tag, submittedAt: submittedAt)
        streams.keep(body: body[...], template: nil, at: index)
        return try submitFilledHeaders(index: index)
    }

    /// Submits `template`'s method to its path prefix followed by `pathSuffix`, with its header fields
    /// and then `headers`, and `body`; otherwise as `submit(path:headers:body:tag:submittedAt:method:)`.
    /// The hot path of a bulk sender: the fixed part of the header block is reused, not rebuilt, and
    /// `body` is kept as the slice it is (no copy) until its DATA is written.
    /// `template` and `body` are consumed: they move into the stream's record, so passing a
    /// reference the caller no longer needs costs no retain here and no release at the caller.
    @discardableResult
    public func submit(template: consuming H2RequestTemplate, pathSuffix: ArraySlice<UInt8>, headers: [H2Header] = [],
                       body: consuming ArraySlice<UInt8>, tag: UInt64, submittedAt: UInt64 = 0) throws(H2Error) -> Int32 {
        guard session != nil else { throw .terminated }
        // `freeStreamSlots` is 0 when no request is accepted: asking `acceptsRequests` first, every
        // time, was a second call into nghttp2 per request.
        guard freeStreamSlots > 0 else { throw acceptsRequests ? .noFreeStreamSlot : .notAcceptingRequests }
        let index = streams.insert(tag: tag, submittedAt: submittedAt)
        pathSuffix.withUnsafeBytes { fillHeaderBlock(template: template, pathSuffix: $0, headers: headers, index: index) }
        streams.keep(body: consume body, template: consume template, at: index)
        return try submitFilledHeaders(index: index)
    }

    /// `submit(template:pathSuffix:headers:body:tag:submittedAt:)` with the path suffix and the body
    /// as ranges of one buffer, which moves into the request's stream: a caller that holds both in
    /// one buffer (a CSV batch's storage) hands over one reference, not two slices, each a retain
    /// and a release on a line that other threads touch too.
    @discardableResult
    public func submit(template: consuming H2RequestTemplate, bytes: consuming [UInt8], pathSuffix: Range<Int>,
                       body: Range<Int>, headers: [H2Header] = [], tag: UInt64, submittedAt: UInt64 = 0) throws(H2Error) -> Int32 {
        guard session != nil else { throw .terminated }
        guard freeStreamSlots > 0 else { throw acceptsRequests ? .noFreeStreamSlot : .notAcceptingRequests }
        precondition(pathSuffix.lowerBound >= 0 && pathSuffix.upperBound <= bytes.count, "H2ClientSession: path suffix out of bounds")
        let index = streams.insert(tag: tag, submittedAt: submittedAt)
        bytes.withUnsafeBytes { buffer in
            fillHeaderBlock(template: template, pathSuffix: UnsafeRawBufferPointer(rebasing: buffer[pathSuffix]),
                            headers: headers, index: index)
        }
        streams.keep(body: (consume bytes)[body], template: consume template, at: index)
        return try submitFilledHeaders(index: index)
    }

    /// Submits the header block for the request in slot `index` (its references kept already).
    private func submitFilledHeaders(index: Int) throws(H2Error) -> Int32 {
        guard let session else {
            streams.remove(at: index)
            throw .terminated
        }
        let userData = H2ClientStreams.userData(for: index)
        let streamID: Int32
        if streams[index].bodyCount == 0 {
            streamID = nghttp2_submit_request(session, nil, headerBlock.nv, headerBlock.count, nil, userData)
        } else {
            var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: userData),
                                                 read_callback: H2ClientCallbacks.readBody)
            streamID = nghttp2_submit_request(session, nil, headerBlock.nv, headerBlock.count, &provider, userData)
        }
        guard streamID > 0 else {
            streams.remove(at: index)
            throw H2Error(nghttp2Code: Int(streamID))
        }
        streams.setStreamID(streamID, at: index)
        hasSubmitted = true
        // nghttp2 refuses requests once its stream ids run out.
        if streamID > Int32.max - 4 { refreshAllowsRequests() }
        return streamID
    }

    /// The `:path` field's place in a template request's header block.
    private static let pathField = 3
    private static let pathFlags = H2HeaderBlock.uncopied | H2Wire.nvNoIndex

    @inline(__always)
    private func fillHeaderBlock(template: H2RequestTemplate, pathSuffix suffix: UnsafeRawBufferPointer,
                                 headers: [H2Header], index: Int) {
        let prefix = template.pathPrefix
        // The block the request before built serves again when only `:path` differs: the same
        // template, the same first-request flags, no row headers of its own.
        if headers.isEmpty, template === blockTemplate, hasSubmitted == blockNotFirst,
           prefix.count + suffix.count <= H2ClientStreams.pathStride {
            setPath(prefix: prefix, suffix: suffix, index: index)
        } else {
            rebuildHeaderBlock(template: template, pathSuffix: suffix, headers: headers, index: index)
        }
    }

    @inline(never)
    private func rebuildHeaderBlock(template: H2RequestTemplate, pathSuffix suffix: UnsafeRawBufferPointer,
                                    headers: [H2Header], index: Int) {
        let prefix = template.pathPrefix
        let pathCount = prefix.count + suffix.count
        // Only a long `:path` and the row's own headers are copied into the block (and by nghttp2);
        // the other fields point at static text, the template and `authorityStorage`, uncopied.
        let byteCount = pathCount + H2HeaderBlock.byteCount(headers)
        headerBlock.reset(fieldCount: 4 + template.fieldCount + headers.count, byteCount: byteCount)
        headerBlock.appendUncopied(name: ":method", value: template.method, neverIndexed: false)
        headerBlock.appendUncopied(name: ":scheme", value: UnsafeBufferPointer(start: Self.https.utf8Start,
                                                                               count: Self.https.utf8CodeUnitCount),
                                   neverIndexed: false)
        headerBlock.appendUncopied(name: ":authority", value: UnsafeBufferPointer(authorityStorage), neverIndexed: false)
        if !prefix.elementsEqual(pathPrefix) {
            pathPrefix = Array(prefix)
            pathPrefixGeneration += 1
        }
        if pathCount <= H2ClientStreams.pathStride {
            headerBlock.appendUncopied(name: ":path", value: UnsafeBufferPointer(start: nil, count: 0), neverIndexed: true)
            setPath(prefix: prefix, suffix: suffix, index: index)
        } else {
            StaticString(":path").withUTF8Buffer { name in
                headerBlock.append(name: UnsafeRawBufferPointer(name), value: UnsafeRawBufferPointer(prefix),
                                   valueSuffix: suffix, neverIndexed: true)
            }
        }
        headerBlock.append(template, notFirst: hasSubmitted)
        if !headers.isEmpty { headerBlock.append(headers, notFirst: hasSubmitted) }
        let reusable = headers.isEmpty && pathCount <= H2ClientStreams.pathStride
        blockTemplate = reusable ? template : nil
        blockNotFirst = hasSubmitted
    }

    /// Writes `:path` into slot `index`'s storage, where nghttp2 reads it (uncopied) when it encodes
    /// the HEADERS frame: the slot is taken until the stream ends.
    @inline(__always)
    private func setPath(prefix: UnsafeBufferPointer<UInt8>, suffix: UnsafeRawBufferPointer, index: Int) {
        let path = streams.path(at: index)
        // The prefix is there already when the slot's last request had it.
        let stream = streams.state(at: index)
        if stream.pointee.pathPrefixGeneration != pathPrefixGeneration {
            if let base = prefix.baseAddress, prefix.count > 0 { path.update(from: base, count: prefix.count) }
            stream.pointee.pathPrefixGeneration = pathPrefixGeneration
        }
        if let base = suffix.baseAddress, suffix.count > 0 {
            UnsafeMutableRawPointer(path + prefix.count).copyMemory(from: base, byteCount: suffix.count)
        }
        headerBlock.replaceValue(at: Self.pathField, value: path, count: prefix.count + suffix.count, flags: Self.pathFlags)
    }

    private static let https: StaticString = "https"

    private func fillHeaderBlock(method: String, path: String, headers: [H2Header]) {
        blockTemplate = nil
        // 34 bytes of pseudo-header names and "https".
        let byteCount = 34 + method.utf8.count + path.utf8.count + configuration.authority.utf8.count
            + H2HeaderBlock.byteCount(headers)
        headerBlock.reset(fieldCount: 4 + headers.count, byteCount: byteCount)
        headerBlock.append(":method", method, neverIndexed: false)
        headerBlock.append(":scheme", "https", neverIndexed: false)
        headerBlock.append(":authority", configuration.authority, neverIndexed: false)
        headerBlock.append(":path", path, neverIndexed: true)
        headerBlock.append(headers, notFirst: hasSubmitted)
    }
}
