// The HTTP rules an answer must keep, checked by the session itself: nghttp2's own HTTP checks are
// off (`NGHTTP2_OPT_NO_HTTP_MESSAGING`, see `H2ClientCallbacks.makeSession`) because they cost more
// per answer than the rest of its receive path, while an answer's meaning rests on two fields only.

extension H2ClientSession.Stream {
    /// `:status`, already parsed (0 unless three digits). Interim 1xx answers may come first; 101,
    /// a status that is not three digits, or one after the final status (a trailer's, a repeat)
    /// breaks the answer.
    mutating func noteStatus(_ parsed: Int) {
        if parsed < 100 || parsed == 101 || status >= 200 {
            malformed = true
        } else {
            status = parsed
        }
    }

    /// `content-length`, already parsed (-2 unless decimal digits); a second one must agree.
    mutating func noteContentLength(_ parsed: Int) {
        if parsed < 0 || (contentLength >= 0 && contentLength != parsed) {
            malformed = true
        } else {
            contentLength = parsed
        }
    }

    /// At the answer's END_STREAM: no final status, a rule broken on the way, or DATA that is not
    /// the `content-length` announced.
    var isMalformedAtEnd: Bool {
        malformed || status < 200 || (contentLength >= 0 && contentLength != receivedBodyBytes)
    }
}
