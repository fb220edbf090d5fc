import APNs
import Pipeline

/// The run's totals in Prometheus' text exposition format (version 0.0.4): what `--metrics-out`
/// writes for node_exporter's textfile collector and what `--pushgateway` pushes. Every series is
/// `apns_bulk_*`, with HELP and TYPE lines, units in the names and `_total` on counters; docs/metrics.md's
/// "The series" lists them. The end-of-run series (`finish_time_seconds`, `exit_status`) are present
/// only at the end, so "is it over, and how" is one query.
///
/// A series' HELP is the same whatever the run, `send` or `broadcast`: one node's textfiles and one
/// Pushgateway hold both, and a name must have one HELP there. What only a broadcast has is a series
/// of its own (`dead_channel_rows_total`); send's series keep their names, which dashboards query.
enum MetricsText {
    /// `labels`: constant labels on every series (the shard, for a textfile beside other shards').
    /// `broadcast`: the run is a broadcast campaign, whose dead channels get their series.
    static func render(_ totals: RunRecorder.Totals, labels: [(String, String)] = [], broadcast: Bool = false) -> String {
        var out = Writer(constant: labels)
        let events = totals.events
        out.gauge("rows", "Rows in the input (the prescan's count, or the rows read once the reader is done).", totals.rows)
        out.counter("rows_recorded_total", "Rows with their final record (a resumed campaign's earlier rows included).",
                    totals.recorded)
        out.family("row_outcomes_total", "counter", "Rows recorded, by outcome.")
        for outcome in Outcome.allCases { out.sample("row_outcomes_total", [("outcome", outcome.rawValue)], totals.outcomes[outcome]) }
        out.family("row_reasons_total", "counter", "Rows recorded with a reason (every outcome but delivered: a send's dead tokens and a broadcast's dead channels too), by reason.")
        for (reason, count) in totals.byReason.sorted(by: { $0.key < $1.key }) { out.sample("row_reasons_total", [("reason", reason)], count) }
        if broadcast {
            // Failed rows, also counted in row_outcomes_total{outcome="failed"}: their own series, since
            // a dead channel, like a dead token, is for the app's backend to clean up, not an error to chase.
            out.counter("dead_channel_rows_total", "A broadcast's rows answered ChannelNotRegistered: the lines of dead-channels.csv, "
                        + "whose channels to remove from the app's backend (broadcast runs only).",
                        totals.byReason[Reason.channelNotRegistered.name] ?? 0)
        }
        out.counter("rows_retried_total", "Rows that took more than one request.", totals.retriedRows)
        out.counter("requests_total", "Requests sent to APNs, every attempt counted.", events.requests)
        out.counter("retries_total", "Rows put back for another attempt (429, 5xx, token refresh, lost request).", events.retries)
        out.counter("too_many_requests_answers_total", "Answers with status 429.", events.tooManyRequests)
        out.counter("expired_provider_token_answers_total", "403 ExpiredProviderToken answers (each may refresh the shared token).",
                    events.expiredProviderTokens)
        out.counter("goaways_total", "GOAWAY frames received.", events.goaways)
        out.counter("stream_resets_total", "Requests whose stream the server reset.", events.streamResets)
        out.counter("requests_lost_total", "Requests lost with their connection (sent again or given up).", events.lostWithConnection)
        out.counter("requests_not_processed_total", "Requests the server certainly did not process (refused streams, above a GOAWAY), sent again.",
                    events.notProcessed)
        out.gauge("requests_in_flight", "Requests sent and not yet answered.", events.inFlight)
        out.gauge("connections_configured", "Connections configured (--connections).", totals.connectionsConfigured)
        out.gauge("connections_open", "Connections ready to send.", events.connectionsOpen)
        out.counter("connections_opened_total", "Connections that became ready (got the server's SETTINGS).", events.connectionsOpened)
        out.family("connections_closed_total", "counter", "Connections that ended, failed attempts to open one included, by cause.")
        for end in ConnectionEnd.allCases { out.sample("connections_closed_total", [("cause", end.label)], events.connectionsClosed[end.rawValue]) }
        out.histogram("latency_seconds", "Time from sending a request to its answer, for rows APNs answered.", totals.latency)
        out.gauge("start_time_seconds", "When sending began, in Unix seconds.", totals.startedAtUnix)
        out.gauge("last_success_time_seconds", "When a row was last delivered (1 s resolution), in Unix seconds; the start time until then.",
                  totals.lastSuccessAtUnix ?? totals.startedAtUnix)
        out.gauge("running", "1 while the run sends, 0 once it is over.", totals.exitStatus == nil ? 1 : 0)
        out.gauge("stopping", "1 once the run was told to stop before every row was answered (a signal, refused credentials, ...).",
                  totals.stopping ? 1 : 0)
        if let finished = totals.finishedAtUnix, let status = totals.exitStatus {
            out.gauge("finish_time_seconds", "When the run ended, in Unix seconds (present at the end only).", finished)
            out.gauge("exit_status", "The exit status of apns-bulk send or broadcast: 0 finished, 2 aborted, 3 some rows gave up (present at the end only).",
                      Int(status))
        }
        return out.text
    }

    /// A label value as the format quotes it: backslash, double quote and newline escaped.
    static func escapeLabelValue(_ value: String) -> String {
        var out = ""
        for character in value.unicodeScalars {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// A float as the format writes it: integers without a fraction, +Inf spelled so.
    static func number(_ value: Double) -> String {
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value.isNaN { return "NaN" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    private struct Writer {
        let constant: [(String, String)]
        var text = ""

        mutating func family(_ name: String, _ type: String, _ help: String) {
            text += "# HELP apns_bulk_\(name) \(help.replacingOccurrences(of: "\\", with: "\\\\"))\n"
            text += "# TYPE apns_bulk_\(name) \(type)\n"
        }

        mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Double) {
            let all = constant + labels
            text += "apns_bulk_" + name
            if !all.isEmpty {
                text += "{" + all.map { "\($0.0)=\"\(MetricsText.escapeLabelValue($0.1))\"" }.joined(separator: ",") + "}"
            }
            text += " " + MetricsText.number(value) + "\n"
        }

        mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Int) {
            sample(name, labels, Double(value))
        }

        mutating func counter(_ name: String, _ help: String, _ value: Int) {
            family(name, "counter", help)
            sample(name, [], value)
        }

        mutating func gauge(_ name: String, _ help: String, _ value: Int) {
            family(name, "gauge", help)
            sample(name, [], value)
        }

        mutating func gauge(_ name: String, _ help: String, _ value: Double) {
            family(name, "gauge", help)
            sample(name, [], value)
        }

        mutating func histogram(_ name: String, _ help: String, _ buckets: LatencyBuckets) {
            family(name, "histogram", help)
            for (bound, count) in zip(LatencyBuckets.upperBoundsSeconds, buckets.cumulative) {
                sample(name + "_bucket", [("le", MetricsText.number(bound))], count)
            }
            sample(name + "_bucket", [("le", "+Inf")], buckets.count)
            sample(name + "_sum", [], buckets.sumSeconds)
            sample(name + "_count", [], buckets.count)
        }
    }
}
