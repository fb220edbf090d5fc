import APNs
import Foundation
import Pipeline
import Transport

/// The parts of `send`'s setup for `--protocol binary` and for the metrics flags.
extension SendSetup {
    /// Apple's binary gateways (issue 15): `production` and `sandbox` with `--protocol binary`.
    static let binaryGateways = ["production": Endpoint(host: "gateway.push.apple.com", port: 2195),
                                 "sandbox": Endpoint(host: "gateway.sandbox.push.apple.com", port: 2195)]

    /// The binary provider API authenticates by client certificate only, and the embedded mock
    /// speaks HTTP/2 only.
    static func checkBinary(_ command: SendCommand, endpoints: [String]) throws {
        if !command.keyFile.isEmpty || command.keyID != nil || command.teamID != nil || command.keysFile != nil {
            throw RunFailure.usage("--protocol binary with token auth (--key-file/--key-id/--team-id): the binary provider API authenticates by client certificate only; give --cert-file/--cert-key-file or --p12-file, or use --protocol http2")
        }
        if command.certFile.isEmpty && command.certKeyFile.isEmpty && command.p12File.isEmpty {
            throw RunFailure.usage("--protocol binary needs the app's client certificate: --cert-file C.pem --cert-key-file K.pem, or --p12-file F.p12")
        }
        if command.certFile.count + command.p12File.count > 1 {
            throw RunFailure.usage("--protocol binary takes one certificate (the binary provider API binds a connection to one app): run one process per certificate")
        }
        if endpoints.contains("mock") {
            throw RunFailure.usage("--protocol binary with --endpoint mock: the embedded mock speaks HTTP/2 only; run `apns-bulk mock-server --legacy-binary-listen HOST:PORT --client-ca CA.pem` and give --endpoint HOST:PORT")
        }
        if command.binaryQuietMs < 1 { throw RunFailure.usage("--binary-quiet-ms \(command.binaryQuietMs): must be at least 1") }
        if command.binaryWindow < 1 { throw RunFailure.usage("--binary-window \(command.binaryWindow): must be at least 1") }
    }

    /// This machine's name as gethostname(2) has it (a pod's name in Kubernetes), without a DNS lookup.
    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `--metrics-out`, `--pushgateway` and their labels; nil when neither is given.
    static func metricsOptions(_ command: SendCommand, shard: Shard?) throws -> MetricsOptions? {
        // Checked even without --metrics-out or --pushgateway: a job file may give it alone.
        guard command.metricsInterval >= 1, command.metricsInterval.isFinite else {
            throw RunFailure.usage("--metrics-interval \(command.metricsInterval): give a number of seconds, at least 1 (default 5)")
        }
        guard command.metricsOut != nil || command.pushgateway != nil else { return nil }
        var options = MetricsOptions(instance: command.metricsInstance ?? Self.hostName())
        options.textfilePath = command.metricsOut
        options.job = command.metricsJob
        // A shard's series are told apart by its index K (the Pushgateway's grouping label).
        options.shard = shard.map { String($0.index) }
        if let url = command.pushgateway {
            do { options.pushgateway = try PushgatewayTarget(parsing: url) } catch {
                throw RunFailure.usage("--pushgateway \(url): \(error.detail)")
            }
        }
        options.intervalSeconds = command.metricsInterval
        if command.metricsJob.isEmpty { throw RunFailure.usage("--metrics-job: give a non-empty name (default apns_bulk)") }
        if let path = command.metricsOut {
            let directory = (path as NSString).deletingLastPathComponent
            var isDirectory: ObjCBool = false
            if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
                throw RunFailure.usage("--metrics-out \(path): the directory \(directory) does not exist; create it (mkdir -p \(directory)) or give a file in an existing directory")
            }
            if !directory.isEmpty, !isDirectory.boolValue {
                throw RunFailure.usage("--metrics-out \(path): \(directory) is a file, not a directory; give a file in a directory")
            }
            if path.hasSuffix("/") || !FileManager.default.isWritableFile(atPath: directory.isEmpty ? "." : directory) {
                throw RunFailure.usage("--metrics-out \(path): its directory is not writable; give a file in a writable directory (node_exporter reads *.prom files)")
            }
        }
        return options
    }
}
