import COpenSSL

/// Empties this thread's OpenSSL error queue and returns its newest entry as text.
///
/// The queue is per thread and TLS code on the same thread reads it (SSL_get_error), so every
/// failure path here drains it rather than leaving stale errors behind.
func drainOpenSSLErrors() -> String {
    var newest: UInt = 0
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        newest = code
    }
    if newest == 0 { return "no OpenSSL error reported" }
    var buffer = [CChar](repeating: 0, count: 256)
    ERR_error_string_n(newest, &buffer, buffer.count)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Runs `body` with a memory BIO over `bytes`, freed afterwards.
func withMemoryBIO<Result>(over bytes: [UInt8], _ body: (OpaquePointer) -> Result) -> Result? {
    bytes.withUnsafeBytes { buffer -> Result? in
        guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
        defer { BIO_free(bio) }
        return body(bio)
    }
}

/// What `write` puts into a fresh memory BIO, as text; nil when `write` reports failure.
func pemText(_ write: (OpaquePointer) -> Int32) -> String? {
    guard let bio = BIO_new(BIO_s_mem()) else { return nil }
    defer { BIO_free(bio) }
    guard write(bio) == 1 else { return nil }
    var data: UnsafeMutablePointer<CChar>?
    let length = apnsbulk_BIO_get_mem_data(bio, &data)
    guard let data, length > 0 else { return nil }
    let bytes = UnsafeRawBufferPointer(start: data, count: Int(length))
    return String(decoding: bytes, as: UTF8.self)
}
