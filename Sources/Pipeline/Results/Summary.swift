/// What a run amounted to: summary.json (keys are a contract, docs/file-formats.md) and a human text, which
/// `send` prints on stdout.
/// Built by the writer thread from every final record.
public struct Summary: Sendable {
    /// Data rows in the input (from the prescan or the reader's count).
    public var rows: Int
    /// Rows by outcome; they add up to `rows` when every row is accounted for.
    public var counts = OutcomeCounts()
    /// Rows by reason (rejected, failed, gave_up, aborted ones).
    public var byReason: [String: Int] = [:]
    /// Latency of the answered requests.
    public var latency = LatencyHistogram()
    /// The run spoke the retired binary protocol, which answers only refusals: nothing is timed.
    public var binaryProtocol = false
    /// From the start of sending (after the prescan) to the last row recorded; the goodbyes after
    /// that are not counted.
    public var elapsedSeconds: Double = 0
    /// Connections configured.
    public var connections = 0
    /// The endpoints, as `host:port`.
    public var endpoints: [String] = []
    /// The endpoints this run never reached, each with its last failure (`unreachable_endpoints`).
    public var unreachableEndpoints: [UnreachableEndpoint] = []
    /// `apns-bulk send`'s exit status for the run.
    public var exitStatus: Int32 = 0
    /// Rows that took more than one request (429, 5xx, a lost connection, an expired provider token,
    /// a move to the other environment).
    public var retriedRows = 0
    /// Where reading the input stopped early (`input_stopped_at_line`); nil when read to the end.
    public var inputStop: InputStop?
    /// `--resume`: rows recorded by the campaign's earlier runs (counted in `counts` too).
    public var carriedRows = 0
    /// `--resume`: of those, the rows APNs answered, left out of this run's rate.
    public var carriedAnswered = 0
    /// `--resume`: rows a crash lost (sent, their answer not logged) that were sent again, over
    /// the whole campaign, exactly (`CrashLoss`; docs/resume-and-bad-nights.md, "What a crash costs").
    public var resentAfterCrash = 0
    /// `--rate`, or the rate `--spread` chose (`rate_per_s`); nil for an unpaced run.
    public var rate: Double?
    /// `--spread`, in seconds (`spread_s`).
    public var spreadSeconds: Double?
    /// `--dry-run`: the rows that passed every check and would be sent (`would_send`); nil for a real run.
    public var wouldSend: Int?
    /// When this run began sending and when its last row was recorded, in milliseconds since the
    /// epoch (`started_at`, `finished_at` in UTC ISO 8601); nil when a resume found nothing to send.
    public var startedAtMilliseconds: Int64?
    public var finishedAtMilliseconds: Int64?
    /// `--input` as given (`input`).
    public var input: String?
    /// The input's fingerprint as campaign.json has it; nil for a stream (`fingerprint`: null).
    public var fingerprint: InputFingerprint?
    /// `--shard`; nil when every row was this run's (`shard`: null).
    public var shard: Shard?
    /// Several credentials or environments (issue 18): rows by credential label, by environment,
    /// the fallback moves and the rows no credential serves; nil when not in play (left out).
    public var groups: GroupCounts?
    /// Attempts, per-endpoint latency and dead tokens by reason, for the HTML report (not in summary.json).
    public var detail = RunDetail()

    /// An empty summary of `rows` rows.
    public init(rows: Int = 0) { self.rows = rows }

    /// Counts one final record.
    public mutating func add(_ record: ResultRecord) {
        add(RowResult(record))
        if record.environment != nil || record.keyID != nil || record.environmentFallbackFrom != nil {
            groups = groups ?? GroupCounts()
            groups?.add(record.outcome, environment: record.environment, keyID: record.keyID,
                        fallbackFrom: record.environmentFallbackFrom)
            if record.outcome.isDeadToken, let environment = record.environment {
                detail.addDead(reason: record.reason, environment: environment)
            }
        }
    }

    mutating func add(_ record: borrowing RowResult) {
        counts.add(record.outcome)
        if let reason = record.reason { byReason[reason, default: 0] += 1 }
        detail.add(record, overall: latency)
        if let latency = record.latencyMs, record.status != 0 { self.latency.record(milliseconds: latency) }
        if record.attempts > 1 || record.retriedAfterConnectionLoss { retriedRows += 1 }
    }

    /// The accounting invariant: every row ended in exactly one outcome (a dry run's rows that
    /// would be sent have none: they are counted in `wouldSend`).
    public var accountingHolds: Bool { counts.accountsFor(rows: rows - (wouldSend ?? 0)) }

    /// Rows APNs answered with a final status (delivered, unregistered, bad_token, failed) per
    /// second of this run (a resumed run's rate leaves the earlier runs' answers out).
    public var notificationsPerSecond: Double {
        guard elapsedSeconds > 0 else { return 0 }
        return Double(answeredRows - carriedAnswered) / elapsedSeconds
    }

    var answeredRows: Int { counts[.delivered] + counts[.unregistered] + counts[.badToken] + counts[.failed] }

    /// summary.json: `rows`, one key per outcome, `by_reason`, `elapsed_s`, `notifications_per_s`,
    /// `latency_ms` {p50,p90,p99,max} (each null when no answer was timed: the binary protocol's
    /// runs, runs that sent nothing), `connections`, `endpoints`, `unreachable_endpoints`
    /// [{endpoint, cause}], `exit_status`, `resent_after_crash`, `started_at`, `finished_at`, `input`,
    /// `fingerprint` {size, sample_sha256}, `shard`, `apns_bulk_version`.
    public var json: String {
        var out: [UInt8] = []
        out.append(contentsOf: "{\n  \"rows\": ".utf8)
        JSONText.appendInteger(Int64(rows), to: &out)
        for outcome in Outcome.allCases {
            out.append(contentsOf: ",\n  \"\(outcome.rawValue)\": ".utf8)
            JSONText.appendInteger(Int64(counts[outcome]), to: &out)
        }
        out.append(contentsOf: ",\n  \"by_reason\": {".utf8)
        for (index, (reason, count)) in byReason.sorted(by: { $0.key < $1.key }).enumerated() {
            out.append(contentsOf: (index == 0 ? "" : ", ").utf8)
            JSONText.appendString(reason, to: &out)
            out.append(contentsOf: ": ".utf8)
            JSONText.appendInteger(Int64(count), to: &out)
        }
        out.append(contentsOf: "},\n  \"elapsed_s\": ".utf8)
        JSONText.appendDecimal(elapsedSeconds, to: &out)
        out.append(contentsOf: ",\n  \"notifications_per_s\": ".utf8)
        JSONText.appendDecimal(notificationsPerSecond, to: &out)
        out.append(contentsOf: ",\n  \"latency_ms\": {".utf8)
        let points: [(String, Double)] = [("p50", latency.milliseconds(atPercentile: 50)),
                                         ("p90", latency.milliseconds(atPercentile: 90)),
                                         ("p99", latency.milliseconds(atPercentile: 99)),
                                         ("max", latency.maxMilliseconds)]
        for (index, (name, value)) in points.enumerated() {
            out.append(contentsOf: "\(index == 0 ? "" : ", ")\"\(name)\": ".utf8)
            if latency.count == 0 { out.append(contentsOf: "null".utf8) } else { JSONText.appendMilliseconds(value, to: &out) }
        }
        out.append(contentsOf: "},\n  \"connections\": ".utf8)
        JSONText.appendInteger(Int64(connections), to: &out)
        out.append(contentsOf: ",\n  \"endpoints\": [".utf8)
        for (index, endpoint) in endpoints.enumerated() {
            if index > 0 { out.append(contentsOf: ", ".utf8) }
            JSONText.appendString(endpoint, to: &out)
        }
        out.append(contentsOf: "],\n  \"unreachable_endpoints\": [".utf8)
        for (index, unreachable) in unreachableEndpoints.enumerated() {
            out.append(contentsOf: (index == 0 ? "{\"endpoint\": " : ", {\"endpoint\": ").utf8)
            JSONText.appendString(unreachable.endpoint, to: &out)
            out.append(contentsOf: ", \"cause\": ".utf8)
            JSONText.appendString(unreachable.cause, to: &out)
            out.append(contentsOf: "}".utf8)
        }
        out.append(contentsOf: "],\n  \"exit_status\": ".utf8)
        JSONText.appendInteger(Int64(exitStatus), to: &out)
        out.append(contentsOf: ",\n  \"resent_after_crash\": ".utf8)
        JSONText.appendInteger(Int64(resentAfterCrash), to: &out)
        if let rate {
            // Not appendDecimal's three places: 1 row over 2 hours is 0.000139/s.
            out.append(contentsOf: ",\n  \"rate_per_s\": \(rate)".utf8)
        }
        if let spreadSeconds {
            out.append(contentsOf: ",\n  \"spread_s\": ".utf8)
            JSONText.appendDecimal(spreadSeconds, to: &out)
        }
        if let wouldSend {
            out.append(contentsOf: ",\n  \"dry_run\": true,\n  \"would_send\": ".utf8)
            JSONText.appendInteger(Int64(wouldSend), to: &out)
        }
        appendRunIdentity(to: &out)
        groups?.appendJSON(to: &out)
        if let inputStop {
            out.append(contentsOf: ",\n  \"input_stopped_at_line\": ".utf8)
            JSONText.appendInteger(Int64(inputStop.line), to: &out)
        }
        out.append(contentsOf: "\n}\n".utf8)
        return String(decoding: out, as: UTF8.self)
    }

    /// A few lines for stdout, where cron mails them: counts by outcome, the top reasons, rate and
    /// latency.
    public var humanText: String {
        var lines: [String] = []
        let parts = Outcome.allCases.filter { counts[$0] > 0 }.map { "\($0.rawValue) \(counts[$0])" }
        if let wouldSend {
            lines.append("dry run: nothing was sent and no connection was opened; \(wouldSend) rows would be sent")
        }
        let whose = shard.map { " of shard \($0)" } ?? ""
        lines.append("\(rows) rows\(whose): " + (parts.isEmpty ? "nothing sent" : parts.joined(separator: ", ")))
        let top = byReason.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(5)
        if !top.isEmpty { lines.append("top reasons: " + top.map { "\($0.key) \($0.value)" }.joined(separator: ", ")) }
        if carriedRows > 0 {
            lines.append("resumed: \(carriedRows) rows were recorded by earlier runs")
        }
        let withheld = byReason[LocalReason.lostInCrash.rawValue] ?? 0
        if resentAfterCrash > 0 || withheld > 0 {
            var line = "crashes: \(resentAfterCrash) rows whose answers a crash lost were sent again"
            if withheld > 0 { line += "; \(withheld) rows whose answers a crash lost were not sent again (LostInCrash)" }
            lines.append(line)
        }
        if let groups { lines.append(contentsOf: groups.humanLines) }
        if retriedRows > 0 {
            lines.append("\(retriedRows) rows needed more than one request (429, 5xx, lost connections, expired provider "
                         + "tokens or moves to the other environment)")
        }
        if wouldSend == nil {
            lines.append("\(Self.fixed(elapsedSeconds, 1)) s, \(Self.fixed(notificationsPerSecond, 0)) notifications/s, "
                         + (latency.count > 0 ? "latency p50 \(Self.fixed(latency.milliseconds(atPercentile: 50), 1)) ms, "
                                + "p99 \(Self.fixed(latency.milliseconds(atPercentile: 99), 1)) ms"
                            : binaryProtocol ? "latency n/a (the binary protocol answers only errors)"
                            : "latency n/a (no answer was timed)"))
        }
        if let rate { lines.append("paced at \(PacerDuration.text(rate: rate))/s" + (spreadSeconds == nil ? " (--rate)" : " (--spread)")) }
        if let inputStop { lines.append(inputStop.message) }
        for unreachable in unreachableEndpoints {
            lines.append("endpoint \(unreachable.endpoint) was never reached: \(unreachable.cause)")
        }
        if !accountingHolds { lines.append("ACCOUNTING MISMATCH: \(rows) rows but \(counts.total) outcomes") }
        return lines.joined(separator: "\n") + "\n"
    }

    package static func fixed(_ value: Double, _ places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = Int64((value * scale).rounded())
        guard places > 0 else { return String(scaled) }
        let whole = String(scaled / Int64(scale))
        var fraction = String(abs(scaled % Int64(scale)))
        while fraction.count < places { fraction = "0" + fraction }
        return whole + "." + fraction
    }

    /// What run this was: when, over which input (and shard), by which apns-bulk. A value that
    /// does not apply is null, never left out, so that a script reads every key.
    private func appendRunIdentity(to out: inout [UInt8]) {
        func appendOptional(_ key: String, _ value: String?) {
            out.append(contentsOf: ",\n  \"\(key)\": ".utf8)
            if let value { JSONText.appendString(value, to: &out) } else { out.append(contentsOf: "null".utf8) }
        }
        appendOptional("started_at", startedAtMilliseconds.map { ISO8601.format(milliseconds: $0) })
        appendOptional("finished_at", finishedAtMilliseconds.map { ISO8601.format(milliseconds: $0) })
        appendOptional("input", input)
        out.append(contentsOf: ",\n  \"fingerprint\": ".utf8)
        if let fingerprint {
            out.append(contentsOf: "{\"size\": ".utf8)
            JSONText.appendInteger(fingerprint.size, to: &out)
            out.append(contentsOf: ", \"sample_sha256\": ".utf8)
            JSONText.appendString(fingerprint.sampleSHA256, to: &out)
            out.append(contentsOf: "}".utf8)
        } else {
            out.append(contentsOf: "null".utf8)
        }
        appendOptional("shard", shard?.description)
        appendOptional("apns_bulk_version", Version.current)
    }
}
