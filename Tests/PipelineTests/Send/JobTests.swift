import APNs
import Testing
import TestSupport
import Transport
@testable import Pipeline

/// A row on its way through the sender: what a retry keeps of it, and the record a stop gives it.
@Suite struct JobTests {
    static let token = String(repeating: "ab", count: 32)

    /// The one job of a one-row campaign, its bytes still in the CSV batch.
    func decodedJob() throws -> Job {
        let directory = try TemporaryDirectory()
        let source = try CSVSource(path: try directory.write("c.csv", "device_token,payload\n\(Self.token),{}\n"))
        let decoder = RowDecoder(defaults: HeaderValues(topic: "com.example.app"), defaultPayload: nil, auth: .token)
        let batch = try #require(try source.nextBatch())
        guard case .send(let job) = decoder.decode(batch, at: batch.indices.first!) else {
            Issue.record("the row was rejected")
            throw CancellationError()
        }
        return job
    }

    @Test func aRetriedJobLetsGoOfItsBatch() throws {
        let retried = try decodedJob()
        func base(_ slice: ArraySlice<UInt8>) -> UInt? {
            slice.withUnsafeBufferPointer { $0.baseAddress.map { UInt(bitPattern: $0) } }
        }
        let tokenBefore = base(retried.deviceToken), payloadBefore = base(retried.payload(runPayload: []))
        // Before: both point into the one batch buffer, the payload right after the token.
        #expect(payloadBefore == tokenBefore.map { $0 + UInt(Self.token.utf8.count) })
        retried.attempts = 2
        retried.retriedAfterConnectionLoss = true
        retried.avoidConnection = 3
        let detached = retried.detached()
        #expect(String(decoding: detached.deviceToken, as: UTF8.self) == Self.token)
        #expect(String(decoding: detached.pathToken, as: UTF8.self) == Self.token)
        #expect(String(decoding: detached.payload(runPayload: []), as: UTF8.self) == "{}")
        #expect(detached.row == retried.row && detached.headers === retried.headers)
        #expect(detached.attempts == 2 && detached.retriedAfterConnectionLoss && detached.avoidConnection == 3,
                "what happened so far comes along (a 503's retry still avoids its connection)")
        // After: neither is in the batch buffer any more.
        #expect(base(detached.deviceToken) != tokenBefore)
        #expect(base(detached.payload(runPayload: [])) != payloadBefore)
    }

    /// Tokens as given and in lowercase, payloads in the row or the run's: one buffer per job,
    /// the batch's own for the usual row, and a retry's copy reads back the same bytes.
    @Test func aJobReadsItsTokensAndPayloadFromOneBufferWhateverTheRowsShape() throws {
        let directory = try TemporaryDirectory()
        let upper = Self.token.uppercased()
        let source = try CSVSource(path: try directory.write("c.csv", """
            device_token,payload
            \(Self.token),{}
            \(upper),"{""a"":1}"
            \(Self.token),
            \(upper),

            """))
        let decoder = RowDecoder(defaults: HeaderValues(topic: "com.example.app"), defaultPayload: Array(#"{"d":1}"#.utf8),
                                 auth: .token)
        let batch = try #require(try source.nextBatch())
        let jobs = batch.indices.compactMap { index -> Job? in
            if case .send(let job) = decoder.decode(batch, at: index) { job } else { nil }
        }
        try #require(jobs.count == 4)
        func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }
        let expected = [(Self.token, "{}"), (upper, #"{"a":1}"#), (Self.token, #"{"d":1}"#), (upper, #"{"d":1}"#)]
        for (job, (given, payload)) in zip(jobs, expected) {
            for copy in [job, job.detached()] {
                #expect(text(copy.deviceToken) == given && text(copy.pathToken) == Self.token && text(copy.payload(runPayload: decoder.runPayload)) == payload,
                        "row \(job.row)")
            }
        }
        let storage = batch.storage.withUnsafeBufferPointer { $0.baseAddress }
        #expect(jobs[0].bytes.withUnsafeBufferPointer { $0.baseAddress } == storage, "the usual row keeps its batch's storage")
        #expect(jobs[2].bytes.withUnsafeBufferPointer { $0.baseAddress } == storage, "and so does one with the run's payload")
        #expect(!jobs[2].payloadIsInBytes && !jobs[2].detached().payloadIsInBytes && !jobs[3].payloadIsInBytes,
                "the run's payload is the workers', not the job's")
        #expect(jobs[0].detached().bytes.withUnsafeBufferPointer { $0.baseAddress } != storage)
    }

    /// The record of a row that ends takes over its job's reference to the batch: the token as
    /// given, in place, and the job holds no bytes after.
    @Test func anEndingJobHandsItsBytesToItsRecord() throws {
        let job = try decodedJob()
        let before = job.deviceToken.withUnsafeBufferPointer { $0.baseAddress }
        let token = job.takeDeviceToken()
        #expect(String(decoding: token, as: UTF8.self) == Self.token)
        #expect(token.withUnsafeBufferPointer { $0.baseAddress } == before, "the batch's own bytes, not a copy")
        #expect(job.bytes.isEmpty)
        let upper = Job(row: 1, RowBytes(copying: Array(Self.token.uppercased().utf8)[...],
                                         lowercaseToken: Array(Self.token.utf8)[...], payload: Array("{}".utf8)[...],
                                         headers: nil))
        #expect(String(decoding: upper.takeDeviceToken(), as: UTF8.self) == Self.token.uppercased(),
                "the token as the input gave it, not the lowercase one :path carries")
    }

    @Test(arguments: [
        (StopCause.interrupted(signal: 2), Outcome.aborted, "Interrupted"),
        (.unreachable(seconds: 30), .gaveUp, "Unreachable"),
        (.credentialsRefused(reason: "InvalidProviderToken"), .aborted, "InvalidProviderToken"),
        (.fatal(detail: "input failed"), .aborted, "InputError"),
        (.outputFailed(detail: "disk full"), .aborted, "OutputError"),
    ])
    func aStoppedRowEndsAsItsStopCauseSays(cause: StopCause, outcome: Outcome, reason: String) throws {
        let job = try decodedJob()
        job.attempts = 1
        let record = job.record(stoppedBy: cause)
        #expect(record.outcome == outcome && record.reason == reason)
        #expect(record.row == job.row && record.attempts == 1)
        #expect(String(decoding: record.deviceToken, as: UTF8.self) == Self.token)
    }
}
