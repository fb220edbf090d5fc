import Foundation

/// A plain TCP listener on 127.0.0.1 (Python's socket module) that answers whatever comes first with
/// an HTTP/1.1 400 and closes, as nginx does to a TLS ClientHello on a plain-HTTP port: what a wrong
/// --endpoint port finds.
public final class PlainHTTPListener {
    public let port: Int
    private let process: Process

    public struct DidNotStart: Error, CustomStringConvertible {
        public let description: String
    }

    public init() throws {
        let out = Pipe()
        process = try Command.start("/usr/bin/env", ["python3", "-u", "-c", Self.script], standardOutput: out)
        let text = LoopbackPort.readAnnouncement(out) { $0.contains("\n") }
        guard let found = LoopbackPort.announced("listening ", in: text) else {
            process.stop(signal: SIGKILL)
            throw DidNotStart(description: "the plain HTTP listener printed: \(text)")
        }
        port = found
    }

    private static let script = """
        import socket
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        print("listening 127.0.0.1:%d" % server.getsockname()[1])
        while True:
            client, _ = server.accept()
            client.recv(65536)
            client.sendall(b"HTTP/1.1 400 Bad Request\\r\\nContent-Length: 0\\r\\nConnection: close\\r\\n\\r\\n")
            client.close()
        """

    /// SIGKILL: Python does not handle the SIGTERM that the test runner's threads block.
    public func stop() { process.stop(signal: SIGKILL) }

    deinit { stop() }
}
