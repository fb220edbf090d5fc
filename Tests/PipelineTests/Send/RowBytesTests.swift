import APNs
import Testing
@testable import Pipeline

/// A job's bytes (`RowBytes`): what a retry's copy owns and lets go, what a reused job keeps of its
/// last row (nothing), and a row with the run's payload and headers against one with its own.
@Suite struct RowBytesTests {
    static let token = String(repeating: "ab", count: 32)
    static let runPayload = Array(#"{"run":1}"#.utf8)[...]

    static func headers(_ topic: String) -> RowHeaders {
        RowHeaders(try! NotificationHeaders(parsing: HeaderValues(topic: topic), auth: .token), own: .topic)
    }

    /// A batch's storage as the reader holds it: the token, then the payload `{}`.
    static func storage() -> [UInt8] { Array((token + "{}").utf8) }

    static func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    static func base(_ bytes: [UInt8]) -> UnsafePointer<UInt8>? { bytes.withUnsafeBufferPointer { $0.baseAddress } }

    /// The storage stays the batch's alone once the job that lent it is gone: writing to it then
    /// happens in place, with no copy (a copy means someone else still holds it).
    @Test(arguments: [true, false])
    func aDetachedJobOwnsItsBytesAndLetsTheBatchGo(detaching: Bool) {
        var storage = Self.storage()
        let before = Self.base(storage)
        var job: Job? = Job(row: 7, RowBytes(in: storage, pathToken: 0..<64, payload: 64..<66, headers: nil))
        job?.giveAHistory()
        let given = job?.history
        let kept = detaching ? job?.detached() : job
        job = nil
        storage[0] = UInt8(ascii: "c")
        if detaching {
            #expect(Self.base(storage) == before, "the copy holds none of the batch's storage")
        } else {
            #expect(Self.base(storage) != before, "the job itself still lends the batch's storage")
        }
        #expect(Self.text(kept!.deviceToken) == Self.token && Self.text(kept!.pathToken) == Self.token)
        #expect(Self.text(kept!.payload(runPayload: Self.runPayload)) == "{}")
        #expect(kept!.row == 7 && kept!.history == given, "what happened so far comes along with the copy")
    }

    @Test func aDetachedJobHoldsItsOwnHeadersAndEachCopyLetsThemGoOnce() {
        var headers: RowHeaders? = Self.headers("com.example.own")
        weak let watched = headers
        var job: Job? = Job(row: 1, RowBytes(in: Self.storage(), pathToken: 0..<64, payload: nil, headers: headers))
        headers = nil
        var copy: Job? = job?.detached()
        #expect(copy?.headers === watched)
        job = nil
        #expect(watched != nil, "the copy holds the headers of its own")
        copy = nil
        #expect(watched == nil, "and lets them go with it")
    }

    /// Reuse makes a spent job the new row's in every field, bytes and history alike; headers the
    /// last row still held are let go rather than leaked.
    @Test func aReusedJobIsTheNewRowsInEveryFieldAndLetsItsLastHeadersGo() {
        var lastHeaders: RowHeaders? = Self.headers("com.example.last")
        weak let watched = lastHeaders
        let job = Job(row: 1, RowBytes(copying: Array(Self.token.uppercased().utf8)[...],
                                       lowercaseToken: Array(Self.token.utf8)[...], payload: Array("{}".utf8)[...],
                                       headers: lastHeaders))
        lastHeaders = nil
        job.giveAHistory()

        let next = String(repeating: "cd", count: 32)
        job.reuse(row: 2, RowBytes(in: Array(next.utf8), pathToken: 0..<64, payload: nil, headers: nil))
        #expect(watched == nil, "the last row's headers are let go")
        #expect(job.row == 2 && job.headers == nil && !job.payloadIsInBytes)
        #expect(Self.text(job.deviceToken) == next && Self.text(job.pathToken) == next)
        #expect(Self.text(job.payload(runPayload: Self.runPayload)) == #"{"run":1}"#)
        #expect(job.history == Job.newRowsHistory)
    }

    /// The run's payload and headers are the workers' to lend: a job holds neither, and its copy
    /// copies only the token.
    @Test func aJobWithTheRunsPayloadAndHeadersHoldsNeitherNorDoesItsCopy() {
        let job = Job(row: 1, RowBytes(in: Self.storage(), pathToken: 0..<64, payload: nil, headers: nil))
        for each in [job, job.detached()] {
            #expect(!each.payloadIsInBytes && each.headers == nil)
            #expect(Self.text(each.payload(runPayload: Self.runPayload)) == #"{"run":1}"#)
            #expect(each.withHeaders { $0 == nil }, "nil: the run's, which the worker holds")
        }
        #expect(job.detached().bytes.count == 64, "the copy's buffer is the token alone")
    }

    @Test func aJobWithItsOwnPayloadAndHeadersReadsThemWhateverTheRunsAre() {
        let own = Self.headers("com.example.own")
        let job = Job(row: 1, RowBytes(in: Self.storage(), pathToken: 0..<64, payload: 64..<66, headers: own))
        for each in [job, job.detached()] {
            #expect(each.payloadIsInBytes && each.headers === own)
            #expect(Self.text(each.payload(runPayload: Self.runPayload)) == "{}")
            #expect(each.withHeaders { $0 === own })
            #expect(Self.text(each.bytes[each.payloadRange]) == "{}" && Self.text(each.bytes[each.pathTokenRange]) == Self.token)
        }
    }
}

extension Job {
    /// Every field of what happened to a row so far set away from a new row's.
    func giveAHistory() {
        attempts = 3
        retriedAfterConnectionLoss = true
        avoidConnection = 2
        refusedTokenUpdate = true
        sentToken = 7
        group = 1
        lane = 2
        fallbackFrom = 1
        resentAfterUnrelatedKey = true
    }

    /// Every field of what happened to a row so far, to compare two jobs by.
    var history: [Int] {
        [attempts, retriedAfterConnectionLoss ? 1 : 0, avoidConnection, refusedTokenUpdate ? 1 : 0,
         sentToken.map(Int.init) ?? -2, group, Int(lane), Int(fallbackFrom), resentAfterUnrelatedKey ? 1 : 0]
    }

    /// `history` of a job just made.
    static var newRowsHistory: [Int] { Job(row: 1, RowBytes(in: [], pathToken: 0..<0, payload: nil, headers: nil)).history }
}
