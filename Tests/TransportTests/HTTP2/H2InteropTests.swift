import Foundation
import Testing
import TestSupport
import Transport
#if canImport(Glibc)
import Glibc
#endif

/// The client session against nghttp2's own server, `nghttpd --no-tls`, over loopback TCP: an
/// independent check of the preface, SETTINGS, HPACK and DATA the session produces.
@Suite(.serialized) struct H2InteropTests {
    @Test func clientSessionGetsAFileFromNghttpd() throws {
        let docroot = try TemporaryDirectory()
        let content = "hello from nghttpd\n"
        try docroot.write("hello.txt", content)

        let port = UInt16(try LoopbackPort.free())
        let logPath = docroot.path("nghttpd.log")
        let logFile = try #require(Command.outputFile(logPath))
        defer { try? logFile.close() }
        let server = try Command.start("/usr/sbin/nghttpd", ["--no-tls", "-a", "127.0.0.1", "-d", docroot.path, "-v", String(port)],
                                       standardOutput: logFile)
        // nghttpd does not exit on SIGTERM.
        defer { server.stop(signal: SIGKILL) }

        let socket = try #require(connectWithRetry(port: port), "nghttpd did not listen on \(port)")
        defer { close(socket) }
        let session = try H2ClientSession(configuration: .init(authority: "127.0.0.1:\(port)", maxStreams: 10))
        var responses: [H2Response] = []
        try session.submit(path: "/hello.txt", headers: [H2Header("apns-topic", "com.example")],
                           body: [], tag: 1, method: "GET")
        try exchange(session, socket) { event in
            if case .response(let response) = event { responses.append(response) }
            return responses.count == 1
        }
        #expect(session.serverMaxConcurrentStreams == 100)
        try session.submit(path: "/hello.txt", headers: [H2Header("apns-id", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")],
                           body: Array(#"{"aps":{}}"#.utf8), tag: 2)
        try exchange(session, socket) { event in
            if case .response(let response) = event { responses.append(response) }
            return responses.count == 2
        }
        try #require(responses.count == 2)
        #expect(responses.map(\.tag) == [1, 2])
        for response in responses {
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == content)
        }
        try session.shutdown()
        try exchange(session, socket) { _ in false }
        #expect(session.isFinished)
        session.terminate()
        // nghttpd closes the connection once it has read (and logged) our GOAWAY.
        var closed = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        var scratch = [UInt8](repeating: 0, count: 1024)
        while poll(&closed, 1, 2000) > 0, scratch.withUnsafeMutableBytes({ read(socket, $0.baseAddress, $0.count) }) > 0 {}
        let frames = try String(contentsOfFile: logPath, encoding: .utf8)
        #expect(frames.contains("recv HEADERS frame"))
        #expect(frames.contains("recv GOAWAY frame"))
        #expect(!frames.contains("recv PRIORITY frame"))
    }

    @Test func serverSessionAnswersH2load() throws {
        let directory = try TemporaryDirectory()
        let payload = try directory.write("payload.json", #"{"aps":{"alert":"hello"}}"#)
        let logFile = try #require(Command.outputFile(directory.path("h2load.log")))
        defer { try? logFile.close() }

        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 4) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        try #require(bound)
        let port = UInt16(bigEndian: address.sin_port)

        let client = try Command.start("/usr/bin/h2load", ["-n", "2000", "-c", "1", "-m", "100", "-d", payload,
                                                           "-H", "apns-topic: com.example.app",
                                                           "http://127.0.0.1:\(port)/3/device/abcdef"],
                                       standardOutput: logFile, standardError: logFile)
        defer { client.stop(signal: SIGKILL) }

        var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        try #require(poll(&poller, 1, 5000) > 0, "h2load did not connect")
        let connection = accept(listener, nil, nil)
        try #require(connection >= 0)
        defer { close(connection) }

        let session = try H2ServerSession(configuration: .init(maxConcurrentStreams: 100))
        var requests = 0
        var badRequests = 0
        var output: [UInt8] = []
        var input = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            output.removeAll(keepingCapacity: true)
            try session.drainOutput(into: &output)
            var written = 0
            while written < output.count {
                let count = output[written...].withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                written += count
            }
            var readable = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            guard poll(&readable, 1, 5000) > 0 else { break }
            let count = input.withUnsafeMutableBytes { read(connection, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            try session.receive(input[0..<count])
            session.drainEvents { event in
                guard case .request(let request) = event else { return }
                requests += 1
                if request.method != "POST" || request.values(of: "apns-topic") != ["com.example.app"]
                    || request.body != Array(#"{"aps":{"alert":"hello"}}"#.utf8) { badRequests += 1 }
                _ = try? session.respond(streamID: request.streamID, status: 200,
                                         headers: [H2Header("apns-id", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")])
            }
        }
        client.waitUntilExit()
        let report = try String(contentsOfFile: directory.path("h2load.log"), encoding: .utf8)
        #expect(requests == 2000)
        #expect(badRequests == 0)
        #expect(session.maxConcurrentStreamsSeen == 100)
        #expect(report.contains("2000 succeeded"), "h2load said: \(report)")
        print(report.split(separator: "\n").filter { $0.hasPrefix("finished") || $0.hasPrefix("requests") }.joined(separator: "\n"))
    }

    /// Writes the session's output and feeds it the server's bytes until `done` or idle for a second.
    private func exchange(_ session: H2ClientSession, _ socket: Int32, done: (H2ClientEvent) -> Bool) throws {
        var output: [UInt8] = []
        var input = [UInt8](repeating: 0, count: 16 * 1024)
        var finished = false
        while !finished {
            output.removeAll(keepingCapacity: true)
            try session.drainOutput(into: &output)
            var written = 0
            while written < output.count {
                let count = output[written...].withUnsafeBytes { write(socket, $0.baseAddress, $0.count) }
                guard count > 0 else { return }
                written += count
            }
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard session.wantsRead, poll(&poller, 1, 1000) > 0 else { return }
            let count = input.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            try session.receive(input[0..<count])
            session.drainEvents { if done($0) { finished = true } }
        }
    }

    private func connectWithRetry(port: UInt16) -> Int32? {
        for _ in 0..<100 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = loopback(port: port)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if connected == 0 { return fd }
            close(fd)
            usleep(20_000)
        }
        return nil
    }

    private func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
