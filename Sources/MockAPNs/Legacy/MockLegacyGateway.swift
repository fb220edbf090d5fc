import APNs
import Transport

/// The binary gateway's rules and memory, on its server's thread: each connection's frames are
/// judged in order (the item rules, `--unregistered-file` tokens as status 8, the faults); the
/// first refusal is answered with an error response and ends the connection, and every frame
/// after it on that connection is discarded, as Apple's gateway did. Every frame is recorded.
final class MockLegacyGateway {
    /// One frame as the gateway saw it, for `--binary-record-out` and tests.
    struct Entry {
        var connection: Int
        var identifier: UInt32
        var deviceToken: String
        /// "accepted", "refused" (with `status`) or "discarded" (after a refusal or a close).
        var result: String
        var status: UInt8
    }

    private let configuration: MockLegacyConfiguration
    private let unregistered: [String: Int64]
    private var random: UInt64
    private var nextConnection = 0
    private var accepted = 0
    private var shutdownDone = false
    private var closeDone = false
    private(set) var entries: [Entry] = []

    init(configuration: MockLegacyConfiguration, unregistered: [String: Int64], seed: UInt64) {
        self.configuration = configuration
        self.unregistered = unregistered
        random = seed &+ 0x9E37_79B9_7F4A_7C15
    }

    /// Takes over an accepted connection.
    func serve(_ stream: TLSStream) {
        let connection = nextConnection
        nextConnection += 1
        var buffer: [UInt8] = []
        var done = false
        stream.start(onBytes: { [self] bytes in
            buffer.append(contentsOf: bytes)
            var offset = 0
            while true {
                switch LegacyNotificationFrame.parse(buffer[offset...]) {
                case .incomplete:
                    buffer.removeFirst(offset)
                    return
                case .protocolError(let identifier):
                    if !done {
                        done = true
                        answer(stream, LegacyErrorResponse(status: .protocolError, identifier: identifier))
                    }
                    buffer.removeAll()
                    return
                case .frame(let frame, let consumed):
                    offset += consumed
                    judge(frame, connection: connection, stream: stream, done: &done)
                }
            }
        }, onEnd: { _ in })
    }

    private func judge(_ frame: LegacyNotificationFrame, connection: Int, stream: TLSStream, done: inout Bool) {
        let token = frame.deviceToken.map { FeedbackTuple(time: 0, token: $0).hexToken } ?? ""
        func record(_ result: String, _ status: LegacyStatus = .noErrors) {
            entries.append(Entry(connection: connection, identifier: frame.identifier, deviceToken: token,
                                 result: result, status: status.rawValue))
        }
        guard !done else { return record("discarded") }
        if let status = frame.refusal ?? (unregistered[token] != nil ? .invalidToken : nil) ?? fault() {
            record("refused", status)
            done = true
            return answer(stream, LegacyErrorResponse(status: status, identifier: frame.identifier))
        }
        record("accepted")
        accepted += 1
        if let after = configuration.shutdownAfter, !shutdownDone, accepted >= after {
            shutdownDone = true
            done = true
            answer(stream, LegacyErrorResponse(status: .shutdown, identifier: frame.identifier))
        } else if let after = configuration.closeAfter, !closeDone, accepted >= after {
            closeDone = true
            done = true
            stream.close()
        }
    }

    /// A `--binary-fail` status drawn for this frame, or nil.
    private func fault() -> LegacyStatus? {
        for (status, rate) in configuration.failures where rate > 0 && draw() < rate { return status }
        return nil
    }

    /// SplitMix64, as a number in 0..<1: a repeatable run for a given `--seed`.
    private func draw() -> Double {
        random &+= 0x9E37_79B9_7F4A_7C15
        var z = random
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }

    /// The error response goes out, then the connection closes (what is queued is sent first).
    private func answer(_ stream: TLSStream, _ response: LegacyErrorResponse) {
        stream.queue(response.bytes)
        stream.finish()
    }

    /// `--binary-record-out`'s lines.
    var recordText: String {
        var text = ""
        for entry in entries {
            text += "{\"connection\":\(entry.connection),\"identifier\":\(entry.identifier),"
                + "\"device_token\":\"\(entry.deviceToken)\",\"result\":\"\(entry.result)\",\"status\":\(entry.status)}\n"
        }
        return text
    }
}
