import Pipeline

/// What renders or exports a run's aggregates, attached to a campaign through
/// ``CampaignConfiguration/exporters``: `apns-bulk send` attaches ``standard`` to every run, and a
/// program that embeds the engine gets the same files in its output directory by doing the same:
///
/// ```swift
/// configuration.exporters += CampaignExporter.standard
/// ```
extension CampaignExporter {
    /// The timeline sidecar, the Prometheus metrics `configuration.metrics` asks for, and
    /// report.html, in the order they finish: the page reads the sidecar the timeline has closed.
    public static let standard: [CampaignExporter] = [.timeline, .metrics, .reportPage]

    /// timeline.jsonl.zst beside the result log, a line a second (`TimelineRecorder`); none for a dry run.
    public static let timeline = CampaignExporter { run in
        guard !run.dryRun else { return nil }
        let timeline = TimelineRecorder(directory: run.configuration.outputDirectory, resumed: run.resumed,
                                        start: TimelineEvent.start(run.configuration), recorder: run.recorder,
                                        control: run.control, warn: run.warn)
        // The recorder holds its consumer weakly: the sidecar lives until the run's end.
        return { _ in withExtendedLifetime(timeline) {} }
    }

    /// `--metrics-out` and `--pushgateway` (`MetricsExporter`), when `configuration.metrics` is set; none
    /// for a dry run.
    public static let metrics = CampaignExporter { run in
        guard !run.dryRun, let options = run.configuration.metrics else { return nil }
        let exporter = MetricsExporter(options: options, recorder: run.recorder,
                                       broadcast: run.configuration.broadcast != nil, warn: run.warn)
        return { _ in exporter.finish() }
    }

    /// report.html beside summary.json, written at every run's end (aborted, interrupted and dry
    /// runs too; a resumed one covers the whole campaign).
    public static let reportPage = CampaignExporter { run in
        let directory = run.configuration.outputDirectory
        return { summary throws(WriteFailure) in
            do throws(OutputFileError) { try ReportPageFile.write(directory: directory, summary: summary, summaryJSON: summary.json) } catch {
                throw WriteFailure(path: directory + "/" + ReportPageFile.name, cause: error)
            }
        }
    }
}
