import Foundation
import Testing
@testable import Transport

@Suite(.serialized)
struct SocketTests {
    private func connect(to address: SocketAddress, timeout: Duration, on reactor: Reactor) -> Result<Socket, SocketError>? {
        let outcome = TransportAwaited<Result<Socket, SocketError>>()
        reactor.execute {
            Socket.connect(to: address, timeout: timeout, on: reactor) { outcome.fulfil($0) }
        }
        return outcome.wait()
    }

    @Test func connectReachesAListenerThatAcceptsAndBytesFlow() throws {
        let listener = try Socket.listen(on: .loopback())
        let port = try listener.localAddress().port
        #expect(port != 0)
        try withRunningReactor { reactor in
            let client = try #require(connect(to: .loopback(port: port), timeout: .seconds(5), on: reactor)).get()
            var accepted: Socket?
            for _ in 0..<100 where accepted == nil {
                accepted = try listener.accept()
                if accepted == nil { usleep(10_000) }
            }
            let server = try #require(accepted)
            #expect(try server.peerAddress() == client.localAddress())

            let sent = Array("hello over loopback".utf8)
            #expect(try sent.withUnsafeBytes { try client.write($0) } == .transferred(sent.count))
            var received = [UInt8](repeating: 0, count: 64)
            var result = SocketIO.wouldBlock
            for _ in 0..<100 where result == .wouldBlock {
                result = try received.withUnsafeMutableBytes { try server.read(into: $0) }
                if result == .wouldBlock { usleep(10_000) }
            }
            #expect(result == .transferred(sent.count))
            #expect(Array(received.prefix(sent.count)) == sent)
            #expect(try received.withUnsafeMutableBytes { try server.read(into: $0) } == .wouldBlock)

            client.close()
            #expect(client.isClosed)
            usleep(20_000)
            #expect(try received.withUnsafeMutableBytes { try server.read(into: $0) } == .closed)
        }
    }

    @Test func connectToAClosedLoopbackPortIsRefused() throws {
        let listener = try Socket.listen(on: .loopback())
        let port = try listener.localAddress().port
        listener.close()
        try withRunningReactor { reactor in
            let result = try #require(connect(to: .loopback(port: port), timeout: .seconds(5), on: reactor))
            #expect(throws: SocketError.connectFailed(address: "127.0.0.1:\(port)", errno: ECONNREFUSED)) {
                try result.get()
            }
        }
    }

    /// A listener whose accept queue is full drops new SYNs, so a connect to it hangs on loopback:
    /// the reactor timer has to end it.
    @Test func connectThatNobodyAnswersTimesOut() throws {
        let listener = try Socket.listen(on: .loopback(), backlog: 0)
        let port = try listener.localAddress().port
        try withRunningReactor { reactor in
            var fillers: [Socket] = []
            var outcome: Result<Socket, SocketError>?
            for _ in 0..<8 {
                outcome = connect(to: .loopback(port: port), timeout: .milliseconds(300), on: reactor)
                guard case let .success(socket) = outcome else { break }
                fillers.append(socket)
            }
            #expect(throws: SocketError.connectTimedOut(address: "127.0.0.1:\(port)", timeout: .milliseconds(300))) {
                try outcome?.get()
            }
            fillers.forEach { $0.close() }
        }
        listener.close()
    }

    @Test func listeningOnABusyPortSaysSo() throws {
        let first = try Socket.listen(on: .loopback())
        let address = SocketAddress.loopback(port: try first.localAddress().port)
        #expect(throws: SocketError.listenFailed(address: address.description, errno: EADDRINUSE)) {
            try Socket.listen(on: address)
        }
    }

    @Test func addressesPrintAsHostPort() throws {
        #expect(SocketAddress.loopback(port: 443).description == "127.0.0.1:443")
        #expect(try #require(SocketAddress(ip: "::1", port: 8443)).description == "[::1]:8443")
        #expect(SocketAddress(ip: "localhost", port: 1) == nil)
    }
}
