import CampaignTestSupport
import Foundation
import MockAPNs
import Testing
import TestSupport
import ZstdFile
@testable import Pipeline
@testable import Report

/// timeline.jsonl.zst, the run's sidecar: what a real run writes adds up to its summary, a resume
/// keeps its complete frames and appends, and its lines read back as written.
@Suite struct ReportSidecarTests {
    @Test func sidecarSecondsAddUpToTheRunAndThePageDetailsToItsRecords() throws {
        var configuration = MockAPNsConfiguration()
        configuration.latencyMilliseconds = 150
        configuration.tooManyRequestsRate = 0.05
        let mocks = try MockEndpoints([configuration, configuration])
        var lines: [TimelineLine] = []
        var page = ""
        let run = try InProcessCampaign.runWithExporters(rows: 3000, mocks: mocks, configure: {
            $0.retryBaseMilliseconds = 10
            $0.maxAttempts = 8
        }, afterRun: { out in
            lines = try #require(TimelineFile.read(path: out + "/" + TimelineFile.name)).lines
            page = try String(contentsOfFile: out + "/" + ReportPageFile.name, encoding: .utf8)
        })
        let summary = run.result.summary
        var outcomes = OutcomeCounts()
        var latencies = 0, retries = 0, tooMany = 0, kinds: [String] = []
        for line in lines {
            switch line {
            case .second(let second):
                outcomes.add(second.outcomes)
                latencies += second.latency.count
                retries += second.retries
                tooMany += second.tooManyRequests
            case .event(let event): kinds.append(event.kind)
            }
        }
        #expect(outcomes == summary.counts, "every recorded row is in some second")
        #expect(latencies == summary.latency.count && retries > 0 && tooMany > 0)
        #expect(kinds == ["start", "end"])
        // The page's details, counted from the records independently.
        var attempts = [Int](repeating: 0, count: RunDetail.attemptBuckets)
        var perEndpoint: [String: Int] = [:]
        for record in run.records {
            attempts[min(record.attempts, RunDetail.attemptBuckets - 1)] += 1
            if let endpoint = record.endpoint, record.latencyMs != nil { perEndpoint[endpoint, default: 0] += 1 }
        }
        #expect(summary.detail.attempts == attempts)
        #expect(summary.detail.endpoints.count == 2)
        for (endpoint, histogram) in zip(summary.detail.endpoints, summary.detail.endpointLatency) {
            #expect(histogram.count == perEndpoint[endpoint])
        }
        #expect(page.contains("data-outcome=\"delivered\" data-count=\"\(summary.counts[.delivered])\""))
        #expect(page.contains("id=\"chart-throughput\"") && !page.contains("data-not-recorded"))
    }

    @Test func anInterruptedRunRecordsItsStopWithTheCauseAndItsPageMarksIt() throws {
        var configuration = MockAPNsConfiguration()
        configuration.latencyMilliseconds = 200
        configuration.maxStreams = 10
        configuration.initialMaxStreams = 10
        let mocks = try MockEndpoints([configuration])
        var events: [TimelineEvent] = []
        var page = ""
        let run = try InProcessCampaign.runWithExporters(rows: 2000, mocks: mocks, whileRunning: { campaign in
            Thread.sleep(forTimeInterval: 1.3)
            campaign.interrupt(signal: 15)
        }, afterRun: { out in
            events = try #require(TimelineFile.read(path: out + "/" + TimelineFile.name)).lines.compactMap { line in
                if case .event(let event) = line { event } else { nil }
            }
            page = try String(contentsOfFile: out + "/" + ReportPageFile.name, encoding: .utf8)
        })
        #expect(run.result.exitStatus == 2 && run.result.summary.counts[.aborted] > 0)
        #expect(events.map(\.kind) == ["start", "stop", "end"])
        #expect(events.first { $0.kind == "stop" }?.detail.hasPrefix("Interrupted: ") == true)
        #expect(events.last?.detail == "2")
        #expect(page.contains("data-event=\"stop\"") && page.contains("data-exit-status=\"2\""))
        #expect(page.contains("data-outcome=\"aborted\" data-count=\"\(run.result.summary.counts[.aborted])\""))
    }

    @Test func aResumedSidecarKeepsItsCompleteFramesAndAppends() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path(TimelineFile.name)
        let first = TimelineLine.event(TimelineEvent(time: 1_700_000_000, kind: "start", detail: "first run"))
        var second = TimelineSecond(time: 1_700_000_001, seconds: 1)
        second.outcomes[.delivered] = 5
        let writer = try ZstdFrameWriter(path: path, level: 1)
        for line in [first, .second(second)] {
            writer.append(line.json)
            try writer.flush()
        }
        try writer.close()
        let whole = try directory.read(TimelineFile.name)
        // A third frame cut by kill -9.
        let cut = try ZstdFrameWriter(path: directory.path("cut.zst"), level: 1)
        cut.append(TimelineLine.second(second).json)
        try cut.close()
        let third = try directory.read("cut.zst")
        _ = try directory.write(TimelineFile.name, bytes: whole + third.prefix(third.count / 2))
        let read = try #require(TimelineFile.read(path: path))
        #expect(read.completeBytes == whole.count)
        #expect(Array(read.lines.prefix(2)) == [first, .second(second)])

        let recorder = RunRecorder(workers: 1, connections: 1, control: nil)
        let resumed = TimelineRecorder(directory: directory.url.path, resumed: true,
                                       start: TimelineEvent(time: 1_700_000_100, kind: "start", detail: "resumed"),
                                       recorder: recorder, control: RunControl(), warn: { Issue.record("warned: \($0)") })
        recorder.finish(summary: Summary(), latency: LatencyBuckets(), exitStatus: 0)
        withExtendedLifetime(resumed) {}
        let after = try #require(TimelineFile.read(path: path))
        let kinds = after.lines.compactMap { line -> String? in if case .event(let event) = line { event.kind } else { nil } }
        #expect(kinds == ["start", "start", "end"], "the first run's lines, then the resumed run's")
        #expect(try Command.tool("zstd", ["-t", "-q", path]).status == 0, "the file is whole zstd again")
    }

    @Test func aSecondReadsBackAsWritten() {
        var second = TimelineSecond(time: 1_795_645_702.425, seconds: 1.001)
        second.outcomes[.delivered] = 19_000
        second.outcomes[.unregistered] = 12
        (second.requests, second.retries, second.tooManyRequests, second.tokenRefreshes) = (19_100, 88, 80, 1)
        (second.goaways, second.streamResets, second.lostWithConnection) = (2, 3, 4)
        (second.connectionsOpened, second.connectionsOpen, second.inFlight) = (6, 4, 800)
        second.connectionsClosed[ConnectionEnd.pingTimeout.rawValue] = 1
        second.latency.record(milliseconds: 12)
        second.latency.record(milliseconds: 120)
        second.latency.sumSeconds = 0.132
        #expect(TimelineLine.parse(TimelineLine.second(second).json.dropLast()) == .second(second))
        let event = TimelineEvent(time: 1_795_645_703.5, kind: "stop", detail: "Interrupted: \"quoted\" <b>")
        #expect(TimelineLine.parse(TimelineLine.event(event).json) == .event(event))
        #expect(TimelineLine.parse(Array("not json".utf8)) == nil)
    }
}
