import ByteScan
import Testing
import Transport

/// The server session reuses the header and body storage of requests nobody holds any more, and
/// answers with inline response fields: neither may leak one request's bytes into another.
@Suite struct H2ServerStorageReuseTests {
    /// A client and a server session back to back; the server's handler decides what it keeps.
    final class Wire {
        let client: H2ClientSession
        let server: H2ServerSession
        var responses: [H2Response] = []
        private var buffer: [UInt8] = []

        init() throws {
            client = try H2ClientSession(configuration: .init(authority: "api.push.apple.com", maxStreams: 100,
                                                              capturedHeaders: .apns))
            server = try H2ServerSession(configuration: .init(maxConcurrentStreams: 100))
        }

        func submit(tag: UInt64, token: String, apnsID: String, body: String) throws {
            try client.submit(path: "/3/device/\(token)",
                              headers: [H2Header("apns-topic", "com.example.app"), H2Header("apns-id", apnsID)],
                              body: Array(body.utf8), tag: tag, submittedAt: tag)
        }

        /// Moves bytes both ways until idle; `handle` sees each request once, inside `drainEvents`.
        func pump(_ handle: (H2ServerRequest) -> Void) throws {
            for _ in 0..<1000 {
                buffer.removeAll(keepingCapacity: true)
                try client.drainOutput(into: &buffer, limit: .max)
                let sent = !buffer.isEmpty
                if sent { try server.receive(buffer) }
                var requests = 0
                server.drainEvents { event in
                    guard case .request(let request) = event else { return }
                    requests += 1
                    handle(request)
                }
                buffer.removeAll(keepingCapacity: true)
                try server.drainOutput(into: &buffer, limit: .max)
                let answered = !buffer.isEmpty
                if answered { try client.receive(buffer) }
                client.drainEvents { event in
                    if case .response(let response) = event { responses.append(response) }
                }
                if !sent, !answered, requests == 0 { return }
            }
        }
    }

    static func token(_ n: Int) -> String {
        let digits = Array("0123456789abcdef")
        return String(repeating: String([digits[(n / 16) % 16], digits[n % 16]]), count: 32)
    }

    @Test func aKeptRequestKeepsItsBytesWhileLaterRequestsReuseStorage() throws {
        let wire = try Wire()
        var kept: H2ServerRequest?
        try wire.submit(tag: 0, token: Self.token(0), apnsID: "first", body: #"{"kept":true}"#)
        try wire.pump { request in
            kept = request
            _ = try? wire.server.respond(streamID: request.streamID, status: 200)
        }
        // Rounds of requests the handler does not keep: their storage goes back to the pool and is
        // reused by the next round, with longer and shorter values than before.
        var seen: [(token: String, apnsID: [String], body: String, fieldCount: Int)] = []
        for round in 1...4 {
            for n in 0..<5 {
                let tag = UInt64(round * 10 + n)
                let apnsID = String(repeating: "i", count: 1 + (round * 7 + n * 13) % 40)
                try wire.submit(tag: tag, token: Self.token(Int(tag)), apnsID: apnsID,
                                body: #"{"n":"\#(String(repeating: "b", count: Int(tag)))"}"#)
            }
            try wire.pump { request in
                seen.append((String(request.path.dropFirst("/3/device/".count)), request.values(of: "apns-id"),
                             String(decoding: request.body, as: UTF8.self), request.headers.count))
                _ = try? wire.server.respond(streamID: request.streamID, status: 200)
            }
        }

        #expect(kept?.values(of: "apns-id") == ["first"])
        #expect(kept.map { String(decoding: $0.body, as: UTF8.self) } == #"{"kept":true}"#)
        #expect(kept?.values(of: "apns-topic") == ["com.example.app"])
        #expect(seen.count == 20)
        for (token, apnsID, body, fieldCount) in seen {
            // The same fields as the first request: nothing left over from a reused buffer.
            #expect(fieldCount == kept?.headers.count)
            let tag = (0..<256).first { Self.token($0) == token } ?? -1
            let round = tag / 10, n = tag % 10
            #expect(apnsID == [String(repeating: "i", count: 1 + (round * 7 + n * 13) % 40)])
            #expect(body == #"{"n":"\#(String(repeating: "b", count: tag))"}"#)
        }
        #expect(wire.responses.count == 21)
    }

    @Test func anInlineResponseFieldReachesTheClient() throws {
        let wire = try Wire()
        try wire.pump { _ in }  // SETTINGS first: the client opens one stream until they arrive
        try wire.submit(tag: 1, token: Self.token(1), apnsID: "x", body: "{}")
        try wire.submit(tag: 2, token: Self.token(2), apnsID: "y", body: "{}")
        let id = "0a1b2c3d-0000-4000-8000-00000000abcd"
        try wire.pump { request in
            var field = H2ResponseField(name: "apns-id", neverIndexed: true)
            for byte in id.utf8 { field.append(byte) }
            let status = request.values(of: "apns-id") == ["x"] ? 200 : 410
            _ = try? wire.server.respond(streamID: request.streamID, status: status, field: field,
                                         body: status == 200 ? [] : Array(#"{"reason":"Unregistered"}"#.utf8))
        }
        let byTag = Dictionary(uniqueKeysWithValues: wire.responses.map { ($0.tag, $0) })
        #expect(byTag[1]?.status == 200)
        #expect(byTag[1]?.apnsID == id)
        #expect(byTag[1]?.body == [])
        #expect(byTag[2]?.status == 410)
        #expect(byTag[2]?.apnsID == id)
        #expect(byTag[2].map { String(decoding: $0.body, as: UTF8.self) } == #"{"reason":"Unregistered"}"#)
    }

    @Test func aSecondInlineResponseFieldReachesTheClientToo() throws {
        let wire = try Wire()
        try wire.pump { _ in }
        try wire.submit(tag: 1, token: Self.token(1), apnsID: "x", body: "{}")
        let id = "0a1b2c3d-0000-4000-8000-00000000abcd"
        let unique = "0d6e2ba9-2d63-4e63-9a6c-0d4a2c40cda5"
        try wire.pump { request in
            var first = H2ResponseField(name: "apns-id", neverIndexed: true)
            for byte in id.utf8 { first.append(byte) }
            var second = H2ResponseField(name: "apns-unique-id", neverIndexed: true)
            for byte in unique.utf8 { second.append(byte) }
            _ = try? wire.server.respond(streamID: request.streamID, status: 200, field: first, second: second)
        }
        #expect(wire.responses.count == 1)
        #expect(wire.responses.first?.apnsID == id)
        #expect(wire.responses.first?.uniqueID == UUIDBytes(unique))
    }

    @Test func responseFieldValuesLongerThanTheInlineRoomAreRefused() {
        let fits = String(repeating: "a", count: H2ResponseField.maxValueBytes)
        #expect(H2ResponseField(name: "apns-id", value: fits, neverIndexed: true)?.valueText == fits)
        #expect(H2ResponseField(name: "apns-id", value: fits + "a", neverIndexed: true) == nil)
    }
}
