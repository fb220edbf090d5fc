import APNs
import Transport

/// The mock's retired protocols (issue 15): Apple's binary gateway and feedback service, beside
/// the HTTP/2 server, sharing its certificate, its client CA and its `--unregistered-file`.
public struct MockLegacyConfiguration: Sendable {
    /// `--legacy-binary-listen`: where the binary gateway listens; nil for none.
    public var binaryAddress: SocketAddress?
    /// `--feedback-listen`: where the feedback service listens; nil for none.
    public var feedbackAddress: SocketAddress?
    /// `--binary-fail`: statuses answered at random, each to a share of the notifications.
    public var failures: [(status: LegacyStatus, rate: Double)] = []
    /// `--binary-shutdown-after`: after the N-th notification accepted (over all connections),
    /// once: status 10 naming it, and the connection closes.
    public var shutdownAfter: Int?
    /// `--binary-close-after`: after the N-th notification accepted (over all connections),
    /// once: the connection closes with no error response (the protocol's silent loss).
    public var closeAfter: Int?
    /// `--feedback-cut-bytes`: the feedback service leaves this many bytes off its answer's end,
    /// so a client meets a truncated tuple.
    public var feedbackCutBytes = 0
    /// `--binary-record-out`: one JSON line per frame received, written when the server stops.
    public var recordPath: String?

    public init() {}

    /// Whether any legacy listener is asked for.
    public var isEnabled: Bool { binaryAddress != nil || feedbackAddress != nil }

    /// Parses `--binary-fail`: `STATUS:RATE[,STATUS:RATE...]`, e.g. `1:0.01,255:0.005`.
    public static func failures(_ text: String) throws(MockAPNsError) -> [(status: LegacyStatus, rate: Double)] {
        var list: [(status: LegacyStatus, rate: Double)] = []
        for part in text.split(separator: ",") {
            let pieces = part.split(separator: ":")
            guard pieces.count == 2, let byte = UInt8(pieces[0]), let status = LegacyStatus(rawValue: byte), byte != 0,
                  let rate = Double(pieces[1]), (0...1).contains(rate) else {
                throw .flag(name: "--binary-fail", value: text,
                            problem: "give STATUS:RATE pairs, e.g. 1:0.01,255:0.005 (a status of the binary API, 1-255, and a rate in 0...1)")
            }
            list.append((status, rate))
        }
        return list
    }
}
