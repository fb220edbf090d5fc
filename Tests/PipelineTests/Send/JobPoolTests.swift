import APNs
import Testing
import TestSupport
@testable import Pipeline

/// Spent jobs going back to the reader (`JobPool`): what is kept, and a reused job is the new row's
/// in every field, nothing of its last row left.
@Suite struct JobPoolTests {
    static let first = String(repeating: "ab", count: 32)
    static let second = String(repeating: "cd", count: 32)

    /// The jobs of a CSV's rows, decoded with `spares`.
    func jobs(_ csv: String, _ decoder: RowDecoder, spares: JobSpares? = nil) throws -> [Job] {
        let directory = try TemporaryDirectory()
        let source = try CSVSource(path: try directory.write("c.csv", csv))
        let batch = try #require(try source.nextBatch())
        return batch.indices.compactMap { index -> Job? in
            if case .send(let job) = decoder.decode(batch, at: index, spares: spares) { job } else { nil }
        }
    }

    @Test func aSpentJobBecomesTheNextRowsJobWithNothingOfItsLastRowLeft() throws {
        let decoder = RowDecoder(defaults: HeaderValues(topic: "com.example.app"), defaultPayload: Array(#"{"d":1}"#.utf8),
                                 auth: .token)
        var spent = try jobs("device_token,payload,topic\n\(Self.first),{},com.example.other\n", decoder)
        try #require(spent.count == 1 && spent[0].headers != nil)
        let job = spent.removeLast()
        job.giveAHistory()
        _ = job.takeDeviceToken()
        var kept = SpentJobs()
        for _ in 1..<JobPool.batchSize {
            let full = kept.keep(Job(row: 0, RowBytes(in: [], pathToken: 0..<0, payload: nil, headers: nil)))
            #expect(!full)
        }
        let identity = ObjectIdentifier(job)
        weak let ownHeaders = job.headers
        let full = kept.keep(consume job)
        #expect(full, "the batch's last job fills it")
        #expect(ownHeaders == nil, "a kept job lets its headers go")
        kept.hand(to: decoder.jobPool)

        let spares = JobSpares(pool: decoder.jobPool)
        let reused = try jobs("device_token,payload\n\(Self.second),\n", decoder, spares: spares)
        try #require(reused.count == 1)
        let next = reused[0]
        #expect(ObjectIdentifier(next) == identity, "the last job given back is the first taken")
        #expect(next.row == 1 && next.headers == nil)
        #expect(String(decoding: next.deviceToken, as: UTF8.self) == Self.second)
        #expect(String(decoding: next.pathToken, as: UTF8.self) == Self.second)
        #expect(!next.payloadIsInBytes, "an empty payload field is the run's")
        #expect(String(decoding: next.payload(runPayload: decoder.runPayload), as: UTF8.self) == #"{"d":1}"#)
        #expect(next.history == Job.newRowsHistory)
    }

    @Test func aJobHeldElsewhereOrStillHoldingItsBytesIsNotKept() throws {
        let decoder = RowDecoder(defaults: HeaderValues(topic: "com.example.app"), defaultPayload: nil, auth: .token)
        let decoded = try jobs("device_token,payload\n\(Self.first),{}\n\(Self.second),{}\n", decoder)
        try #require(decoded.count == 2)
        var kept = SpentJobs()
        _ = decoded[0].takeDeviceToken()
        let sharedKept = kept.keep(decoded[0])
        #expect(!sharedKept, "not kept while the array holds it too")
        #expect(!decoded[1].spend(), "a job whose bytes are still its own is not spent")
        #expect(!decoded[1].bytes.isEmpty)
        _ = decoded[1].takeDeviceToken()
        #expect(decoded[1].spend())
        #expect(JobSpares(pool: decoder.jobPool).next() == nil, "nothing was handed to the pool")
    }

    @Test func aFullPoolLetsFurtherBatchesGo() {
        let pool = JobPool()
        for _ in 0...JobPool.maxBatches {
            pool.give((0..<2).map { _ in Job(row: 0, RowBytes(in: [], pathToken: 0..<0, payload: nil, headers: nil)) })
        }
        var batches = 0
        while pool.take() != nil { batches += 1 }
        #expect(batches == JobPool.maxBatches)
    }
}
