import Testing
@testable import Pipeline

/// What dead tokens cost a binary campaign, judged on a virtual clock: a gateway that answers each
/// refusal a fixed time after the refused frame went out, and a sender that drives `BinaryLink` as
/// `BinaryWorker` does (fill while there is room, check what went through one horizon after the
/// window filled, split at each refusal and send what followed again first). End to end, the same
/// count also measures how promptly a loaded machine lets the gateway answer
/// (`BinaryProtocolTests.deadTokensDoNotMultiplyTheFramesSent` keeps a looser bound that holds
/// under load).
@Suite struct BinaryWindowCampaignTests {
    /// One campaign's frames on the wire: `rows` rows, every `deadEvery`th of them (from the
    /// `firstDead`th) refused, refusals answered `answerDelay` ns after their frame was written, a
    /// frame written every `writeTime` ns.
    struct Campaign {
        var rows = 5000
        var firstDead = 20
        var deadEvery = 40
        var answerDelay: UInt64 = 1_000_000
        var writeTime: UInt64 = 5_000
        var windowLimit = 10_000

        func frames() -> (frames: Int, finished: Int) {
            let link = BinaryLink(slot: ConnectionSlot(id: 0, endpointIndex: 0, addressIndex: 0), windowLimit: windowLimit)
            link.noteHandshake(2 * answerDelay)
            // The worker's round with the default --binary-quiet-ms (1000): a quarter of it.
            let round: UInt64 = 250_000_000
            var queue = Array(1...rows)
            var head = 0
            var now: UInt64 = 0
            var frames = 0
            var finished = 0
            var refusal: (identifier: UInt32, at: UInt64)?
            var probe: UInt64?
            while finished < rows {
                while link.hasRoom, head < queue.count {
                    let row = queue[head]
                    head += 1
                    now += writeTime
                    let identifier = link.append(BinaryLinkTests.job(row), at: now)
                    frames += 1
                    // The gateway refuses the first dead token since it last closed, and discards
                    // everything after it.
                    if refusal == nil, row >= firstDead, (row - firstDead) % deadEvery == 0 {
                        refusal = (identifier, now + answerDelay)
                    }
                }
                if !link.hasRoom, probe == nil { probe = now + link.horizon(round: round) }
                if let (identifier, at) = refusal, at <= (probe ?? .max) {
                    now = max(now, at)
                    let (before, failed, after) = link.split(at: identifier, refusal: true)
                    if let failed { link.noteAnswer(after: now - failed.sentAt) }
                    finished += before.count + 1
                    queue.replaceSubrange(..<head, with: after.map(\.job.row))
                    head = 0
                    refusal = nil
                    probe = nil
                } else if let at = probe {
                    now = max(now, at)
                    let horizon = link.horizon(round: round)
                    link.advanceThrough(sentBefore: now - horizon)
                    probe = nil
                } else {
                    // Nothing more to send and nothing refused: the quiet period delivers the rest.
                    now += 4 * round
                    finished += link.takeQuiet(sentBefore: now).count
                }
            }
            return (frames, finished)
        }
    }

    // Clock: virtual (the gateway answers 1 ms after a frame). This campaign costs 14,202 frames:
    // about 74 sent again per dead token. Were the window not halved on refusals, 160,607; were it
    // to start at --binary-window, 28,336.
    @Test func deadTokensCostResendsOfTheWindowTheRefusalsLeft() {
        let (frames, finished) = Campaign().frames()
        #expect(finished == 5000)
        #expect(frames <= 3 * 5000, "\(frames) frames for 5000 rows and 125 dead tokens")
    }
}
