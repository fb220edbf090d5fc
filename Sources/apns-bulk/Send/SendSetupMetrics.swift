import Foundation
import Pipeline

/// The setup of the metrics flags (`MetricsFlags`, `send`'s and `broadcast`'s): `--metrics-out`,
/// `--pushgateway` and their labels.
extension SendSetup {
    /// This machine's name as gethostname(2) has it (a pod's name in Kubernetes), without a DNS lookup.
    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `--metrics-out`, `--pushgateway` and their labels; nil when neither is given.
    static func metricsOptions(_ command: MetricsFlags, shard: Shard?) throws -> MetricsOptions? {
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
