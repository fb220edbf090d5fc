import Glibc
import Testing
@testable import Transport

/// A client whose write fails (the server reset the connection) first reads what the server sent
/// before: answers already in the socket are delivered, not handed back as lost (and sent twice).
@Suite struct ClientConnectionWriteErrorTests {
    @Test func answersThatArrivedBeforeAWriteErrorAreDeliveredNotLost() throws {
        let server = try H2Server.start(.init(address: .loopback(), identity: .ephemeral(hosts: ["127.0.0.1"]))) {
            AnswerThenResetServer(resetAfter: 5)
        }
        defer { server.stop() }
        let authority = try #require(server.certificateAuthority)
        let tls = try TLSContext.client(additionalTrust: .authority(authority))
        let port = server.address.port
        let report = try withRunningReactor { reactor -> WriteErrorReport? in
            let recorder = WriteErrorRecorder()
            reactor.execute {
                let connection = ClientConnection(
                    reactor: reactor,
                    configuration: .init(endpoint: Endpoint(host: "127.0.0.1", port: port), address: .loopback(port: port),
                                         tls: tls, maxStreams: 10, singleStreamUntilAuthorized: false),
                    delegate: recorder)
                recorder.connection = connection
                connection.start()
            }
            guard recorder.ready.wait(seconds: 10) == true else { return nil }
            reactor.execute {
                guard let connection = recorder.connection else { return }
                for tag in 1...5 { _ = connection.submit(path: "/3/device/aa", headers: [], body: [], tag: UInt64(tag)) }
                connection.flush()
                // The reactor thread reads nothing meanwhile: the server answers all five and resets
                // the connection, and the answers wait in this socket.
                usleep(300_000)
                _ = connection.submit(path: "/3/device/aa", headers: [], body: [], tag: 6)
                connection.flush()
            }
            return recorder.closed.wait(seconds: 10)
        }
        let result = try #require(report, "the connection did not close")
        #expect(result.answered.sorted() == [1, 2, 3, 4, 5])
        #expect(result.lost == [6])
        #expect(result.notProcessed.isEmpty)
        #expect(result.closeError != nil)
        #expect(!result.endedGracefully, "a reset is not an orderly end (the reconnect waits)")
    }
}

struct WriteErrorReport: Sendable {
    var answered: [UInt64] = []
    var lost: [UInt64] = []
    var notProcessed: [UInt64] = []
    var closeError: ClientConnectionError?
    var endedGracefully = true
}

/// Records one connection's endings on its reactor thread, and hands the report over at close.
/// Unchecked Sendable: it only crosses into `execute` blocks; its state is touched on the reactor
/// thread alone (the test thread waits on the awaited values, which lock).
final class WriteErrorRecorder: ClientConnectionDelegate, @unchecked Sendable {
    var connection: ClientConnection?
    let ready = TransportAwaited<Bool>()
    let closed = TransportAwaited<WriteErrorReport>()
    private var report = WriteErrorReport()

    func connectionDidBecomeReady(_ connection: ClientConnection) { ready.fulfil(true) }
    func connectionHasFreeSlots(_ connection: ClientConnection) {}
    func connection(_ connection: ClientConnection, didReceive response: H2Response) { report.answered.append(response.tag) }
    func connection(_ connection: ClientConnection, didNotProcess tag: UInt64, cause: H2NotProcessedCause) {
        report.notProcessed.append(tag)
    }
    func connection(_ connection: ClientConnection, lost tag: UInt64, cause: H2LossCause) { report.lost.append(tag) }
    func connection(_ connection: ClientConnection, didReceiveGoaway goaway: H2GoAway) {}
    func connection(_ connection: ClientConnection, didCloseWith error: ClientConnectionError?) {
        report.closeError = error
        report.endedGracefully = connection.endedGracefully
        self.connection = nil
        ready.fulfil(false)
        closed.fulfil(report)
    }
}

/// Answers every request at once; right after the `resetAfter`-th answer went out it resets the
/// connection (RST: the client's later requests are never read).
final class AnswerThenResetServer: H2ServerDelegate {
    let resetAfter: Int

    init(resetAfter: Int) { self.resetAfter = resetAfter }

    func connectionOpened(_ connection: H2ServerConnection) -> any H2ServerConnectionHandler {
        Handler(resetAfter: resetAfter)
    }

    final class Handler: H2ServerConnectionHandler {
        let resetAfter: Int
        var answered = 0

        init(resetAfter: Int) { self.resetAfter = resetAfter }

        func received(_ request: H2ServerRequest, on connection: H2ServerConnection) {
            connection.respond(streamID: request.streamID, status: 200)
            answered += 1
            // On the next loop turn, once this read's answers were written.
            if answered == resetAfter { connection.schedule(after: .zero) { [weak connection] in connection?.reset() } }
        }
    }
}
