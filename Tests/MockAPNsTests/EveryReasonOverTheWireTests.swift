import APNs
import MockAPNs
import Testing
import Transport

/// Every reason of docs/apns.md's response table, produced by the mock (scripted with --respond-file's
/// mechanism), carried over real TLS + HTTP/2 by ClientConnection, and decoded by `Response`
/// into the status, reason and disposition the sender acts on.
@Suite(.serialized)
struct EveryReasonOverTheWireTests {
    static func hex(_ tag: UInt64) -> String {
        let digits = String(tag, radix: 16)
        return String(repeating: "0", count: 64 - digits.count) + digits
    }

    @Test func everyReasonArrivesWithItsStatusAndDisposition() throws {
        let reasons = Reason.allCases
        let run = try runAgainstMock(total: reasons.count, singleStreamUntilAuthorized: false) { configuration in
            configuration.initialMaxStreams = 100
            configuration.maxStreams = 100
            for (index, reason) in reasons.enumerated() {
                configuration.scripted[Self.hex(UInt64(index + 1))] =
                    .init(status: reason.status, reason: reason.name)
            }
        }
        #expect(run.responses == reasons.count)
        for (index, reason) in reasons.enumerated() {
            let answer = try #require(run.answers[UInt64(index + 1)], "no answer for \(reason.name)")
            let response = Response(status: answer.status, apnsID: nil, body: answer.body)
            #expect(response.status == reason.status, "\(reason.name)")
            #expect(response.reason == reason, "\(reason.name): body \(String(decoding: answer.body, as: UTF8.self))")
            #expect(response.disposition == reason.disposition, "\(reason.name)")
        }
    }

    @Test func anUnknownReasonIsClassifiedByItsStatus() throws {
        let scripted: [(Int, String, Disposition)] = [
            (400, "SomethingNew", .permanent), (429, "SlowDownPlease", .retryLater(.perDeviceToken)),
            (503, "Maintenance", .retryLater(.connection)), (410, "GoneForGood", .deadToken),
        ]
        let run = try runAgainstMock(total: scripted.count, singleStreamUntilAuthorized: false) { configuration in
            configuration.initialMaxStreams = 10
            for (index, (status, reason, _)) in scripted.enumerated() {
                configuration.scripted[Self.hex(UInt64(index + 1))] = .init(status: status, reason: reason)
            }
        }
        for (index, (status, reason, disposition)) in scripted.enumerated() {
            let answer = try #require(run.answers[UInt64(index + 1)])
            let response = Response(status: answer.status, apnsID: nil, body: answer.body)
            #expect(response.status == status)
            #expect(response.reasonText == reason)
            #expect(response.reason == nil)
            #expect(response.disposition == disposition, "\(reason)")
        }
    }
}
