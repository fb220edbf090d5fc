#if canImport(Glibc)
import Glibc
#endif

/// `--dry-run`: every row read and checked by the same `RowDecoder` as a real run (same
/// rejections, same reasons), on the calling thread, with no reactor, no DNS lookup and no
/// connection. The result files are a real run's, less what only APNs could say:
/// results.jsonl.zst holds the rejected rows' records (rows that would be sent get none: their
/// outcome would be APNs'), dead-tokens.csv only its header, and summary.json `would_send`.
/// campaign.json is not written: the directory is no campaign to `--resume`. With several
/// credentials each row is routed by the real run's `CredentialRouter`, so the rows it would
/// reject (`NoCredentialsForTopic`, `UnknownKeyId`, `InvalidEnvironment`) are rejected here too,
/// named on stderr and in summary.json's `no_credentials`, and are not counted as would-send.
extension Campaign {
    func dryRun<Source: RowSource>(_ source: Source, expectedRows: Int?, claim: CampaignDirectory.Claim,
                                   duplicateSuspects: [UInt64]? = nil, template: BoundPayloadTemplate? = nil,
                                   columns: GroupColumns? = nil) throws -> Result {
        let configuration = claim.configuration
        let directory = configuration.outputDirectory
        let log: ResultLog
        do {
            try OutputFile.createDirectory(directory)
            log = try ResultLog(path: CampaignDirectory.logPath(directory))
            log.kind = configuration.recordKind
            try DeadTokenReport(path: CampaignDirectory.deadTokensPath(directory, kind: configuration.recordKind),
                                kind: configuration.recordKind).close()
        } catch {
            throw SetupError.output(path: directory, detail: "\(error)")
        }
        let decoder = RowDecoder(defaults: configuration.defaults, defaultPayload: configuration.defaultPayload,
                                 auth: configuration.authentication.kind, template: template,
                                 broadcast: configuration.broadcastRows)
        let duplicates = configuration.allowDuplicates ? nil
            : DuplicateTokens(suspects: duplicateSuspects, defaultTopic: configuration.defaults.topic)
        let router = configuration.credentials.isEmpty ? nil : CredentialRouter(configuration: configuration)
        let columns = columns ?? Self.groupColumns(configuration)
        if router != nil, CampaignShared.labelsRecords(configuration) { log.labels = RecordLabels(configuration: configuration) }
        var noCredentials = NoCredentialsTally()
        var liveActivityRules = LiveActivityRuleNotes()
        let warn = { @Sendable (line: String) in
            let bytes = Array(((configuration.showProgress ? "\r" : "") + line + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        }
        let exports = configuration.exporters.compactMap {
            $0.start(CampaignExporter.Run(configuration: configuration, resumed: false, dryRun: true, recorder: recorder,
                                          control: control, warn: warn))
        }
        let startedAt = ContinuousClock.now
        let progress = configuration.showProgress ? ProgressLine(expectedRows: expectedRows, startedAt: startedAt) : nil
        var summary = Summary(rows: 0)
        var wouldSend = 0
        var lastRow = 0
        var writeError: String?
        func record(_ result: consuming RowResult) {
            if let labels = log.labels, result.environmentCode != 0 {
                summary.groups = summary.groups ?? GroupCounts()
                summary.groups?.add(result.outcome, environment: labels.fields(of: result).environment, keyID: nil, fallbackFrom: nil)
            }
            summary.add(result)
            guard writeError == nil else { return }
            do { try log.append(result) } catch { writeError = error.description }
        }
        do {
            // A SIGINT stops the reading: the rows read so far are the summary's `rows`.
            while !control.isStopping, let batch = try source.nextBatch() {
                for index in batch.indices {
                    if let shard = configuration.shard, !shard.owns(batch, at: index) { continue }
                    switch decoder.decode(batch, at: index) {
                    case .rejected(let reason):
                        record(RowResult(row: batch.number(at: index), deviceToken: batch.field(.deviceToken, at: index) ?? [],
                                         outcome: .rejected, reason: reason))
                    case .breaksLiveActivityRule(let rule):
                        record(liveActivityRules.record(row: batch.number(at: index),
                                                        deviceToken: batch.field(.deviceToken, at: index) ?? [],
                                                        breaking: rule, warn: warn))
                    case .send(let job):
                        if let duplicates,
                           let first = duplicates.firstRow(of: job.row, token: job.pathToken, topic: DuplicateTokens.ownTopic(batch, at: index)) {
                            record(RowResult(row: job.row, deviceToken: job.deviceToken, outcome: .rejected,
                                             reason: DuplicateTokens.reason, duplicateOf: first))
                        } else if let router {
                            let topic = job.headers?.values.topic ?? decoder.defaults.topic
                            switch router.route(environment: columns.environmentSlot.flatMap { batch.field(slot: $0, at: index) },
                                                keyID: columns.keyIDSlot.flatMap { batch.field(slot: $0, at: index) }, topic: topic) {
                            case .group:
                                wouldSend += 1
                            case .rejected(let reason, let environment):
                                if reason == .noCredentialsForTopic, let environment {
                                    noCredentials.note(topic: topic, environment, warn: warn)
                                }
                                record(job.record(.rejected, reason: reason.rawValue, environment: environment))
                            case .keyElsewhere(let key, let environment):
                                noCredentials.note(topic: topic, environment, keyElsewhere: key, router: router, warn: warn)
                                record(job.record(.rejected, reason: LocalReason.noCredentialsForTopic.rawValue, environment: environment))
                            case .noEndpoint(let environment):
                                // Only without the prescan (which stops the run first): as the reader does.
                                noCredentials.note(topic: topic, environment, warn: warn)
                                record(job.record(.rejected, reason: LocalReason.noCredentialsForTopic.rawValue, environment: environment))
                            }
                        } else {
                            wouldSend += 1
                        }
                    }
                }
                lastRow = batch.numbers.last ?? lastRow
                summary.rows = summary.counts.total + wouldSend
                let now = ContinuousClock.now
                if writeError == nil { do { try log.flushIfDue(now: now) } catch { writeError = error.description } }
                progress?.update(done: summary.rows, counts: summary.counts, now: now)
            }
        } catch {
            // Only without the prescan can a line fail mid-file: as in a real run, the row at it
            // is aborted (InputError) and the rest cannot be read.
            if let stop = source.stoppedAt { record(stop.record(row: lastRow + 1)) }
        }
        do { try log.close() } catch { if writeError == nil { writeError = error.description } }
        if let writeError { control.stop(.outputFailed(detail: "cannot write the result files: \(writeError)")) }
        progress?.finish(done: summary.counts.total + wouldSend, counts: summary.counts)

        summary.rows = summary.counts.total + wouldSend
        summary.wouldSend = wouldSend
        if router != nil, CampaignShared.labelsRecords(configuration) || !noCredentials.rows.isEmpty {
            summary.groups = summary.groups ?? GroupCounts()
            summary.groups?.noCredentials = NoCredentialsTally.counts(noCredentials.rows)
        }
        summary.inputStop = source.stoppedAt
        summary.elapsedSeconds = ProgressLine.seconds(ContinuousClock.now - startedAt)
        summary.connections = configuration.connections
        summary.endpoints = configuration.endpoints.map(\.description)
        let cause = control.stopCause
        summary.exitStatus = Self.exitStatus(cause: cause, summary: summary)
        do { try OutputFile.write(Array(summary.json.utf8), to: directory + "/summary.json") } catch {
            throw SetupError.output(path: directory, detail: error.description)
        }
        for finish in exports {
            do { try finish(summary) } catch { throw SetupError.output(path: directory, detail: error.cause.description) }
        }
        withExtendedLifetime(claim.lock) {}
        return Result(summary: summary, stopCause: cause, exitStatus: summary.exitStatus)
    }
}
