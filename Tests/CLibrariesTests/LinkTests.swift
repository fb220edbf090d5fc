import CCSV
import CLinux
import CNGHTTP2
import COpenSSL
import CZstd
import Glibc
import Testing

/// One real call into each C library, so a broken module map or link line fails here first.
@Suite struct LinkTests {
    @Test func nghttp2ReportsItsVersion() {
        let info = nghttp2_version(0)
        #expect(info != nil)
        #expect(info!.pointee.version_num >= 0x013400)  // 1.52.0 or later
    }

    @Test func nghttp2CreatesAndDeletesAClientSession() {
        var callbacks: OpaquePointer?
        #expect(nghttp2_session_callbacks_new(&callbacks) == 0)
        defer { nghttp2_session_callbacks_del(callbacks) }
        var session: OpaquePointer?
        #expect(nghttp2_session_client_new(&session, callbacks, nil) == 0)
        nghttp2_session_del(session)
    }

    @Test func openSSLHashesSHA256() {
        let input = Array("abc".utf8)
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = EVP_Digest(input, input.count, &digest, &length, EVP_sha256(), nil)
        #expect(ok == 1)
        let hex = digest.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        #expect(hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func openSSLGeneratesAP256KeyThroughTheShim() {
        let key = apnsbulk_EVP_EC_gen_p256()
        #expect(key != nil)
        #expect(apnsbulk_EVP_PKEY_bits(key) == 256)
        EVP_PKEY_free(key)
    }

    @Test func zstdRoundTripsAFrame() {
        let input = Array(String(repeating: "apns-bulk ", count: 100).utf8)
        var compressed = [UInt8](repeating: 0, count: ZSTD_compressBound(input.count))
        let size = ZSTD_compress(&compressed, compressed.count, input, input.count, 3)
        #expect(ZSTD_isError(size) == 0)
        var output = [UInt8](repeating: 0, count: input.count)
        let back = ZSTD_decompress(&output, output.count, compressed, size)
        #expect(ZSTD_isError(back) == 0)
        #expect(output == input)
    }

    @Test func linuxModuleCarriesAnEventfdCountThroughEpoll() {
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        let wake = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        #expect(epoll >= 0 && wake >= 0)
        defer { close(wake); close(epoll) }
        var interest = epoll_event()
        interest.events = EPOLLIN.rawValue
        interest.data.u64 = 42
        #expect(epoll_ctl(epoll, EPOLL_CTL_ADD, wake, &interest) == 0)
        var one: UInt64 = 1
        #expect(write(wake, &one, 8) == 8)
        var ready = epoll_event()
        #expect(epoll_wait(epoll, &ready, 1, 1000) == 1)
        #expect(ready.data.u64 == 42)
    }

    @Test func linuxModuleNamesTheCallingThread() throws {
        #expect(apnsbulk_set_thread_name("link-test") == 0)
        let comm = fopen("/proc/thread-self/comm", "r")
        try #require(comm != nil)
        defer { fclose(comm) }
        var name = [CChar](repeating: 0, count: 32)
        #expect(fgets(&name, 32, comm) != nil)
        #expect(name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } == "link-test\n")
    }

    @Test func libcsvParsesAQuotedField() {
        final class Fields { var values: [String] = [] }
        let fields = Fields()
        var parser = csv_parser()
        #expect(csv_init(&parser, apnsbulk_csv_strict | apnsbulk_csv_strict_fini) == 0)
        defer { csv_free(&parser) }
        let input = Array("a,\"b,\"\"c\"\"\"\n".utf8)
        let context = Unmanaged.passUnretained(fields).toOpaque()
        let onField: @convention(c) (UnsafeMutableRawPointer?, Int, UnsafeMutableRawPointer?) -> Void = { data, length, user in
            let fields = Unmanaged<Fields>.fromOpaque(user!).takeUnretainedValue()
            let bytes = UnsafeRawBufferPointer(start: data, count: length)
            fields.values.append(String(decoding: bytes, as: UTF8.self))
        }
        let parsed = csv_parse(&parser, input, input.count, onField, nil, context)
        #expect(parsed == input.count)
        csv_fini(&parser, onField, nil, context)
        #expect(fields.values == ["a", "b,\"c\""])
    }
}
