import Foundation
import Testing
import TestSupport
@testable import MockAPNs

/// The record file's flush timer may fire after the server stopped and closed the file (between
/// `serverStopping` and the reactor's end): that flush must do nothing, not trap.
@Suite struct MockAPNsRecorderTests {
    @Test func aFlushAfterCloseIsIgnoredAndTheFileStaysComplete() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("record.jsonl.zst")
        let recorder = try MockAPNsRecorder(path: path)
        recorder.record(timeMilliseconds: 1, connection: 1, stream: 1, deviceToken: "ab", apnsID: "id", status: 200,
                        reason: nil)
        recorder.record(timeMilliseconds: 2, connection: 1, stream: 3, deviceToken: "cd", apnsID: "id2", status: 410,
                        reason: "Unregistered", keyID: "KEYID12345")
        recorder.close()
        recorder.flush()
        recorder.close()
        #expect(recorder.failure == nil)

        // Read back by the zstd tool, as a user's script would: both records, whole, in order.
        let decoded = try ZstdCLI.decode(path)
        #expect(decoded.status == 0, "\(decoded.stderr)")
        let records = try ZstdCLI.jsonLines(path)
        try #require(records.count == 2, "\(decoded.stdout)")
        #expect(records[0]["time_ms"] as? Int == 1)
        #expect(records[0]["connection"] as? Int == 1)
        #expect(records[0]["stream"] as? Int == 1)
        #expect(records[0]["device_token"] as? String == "ab")
        #expect(records[0]["apns_id"] as? String == "id")
        #expect(records[0]["status"] as? Int == 200)
        #expect(records[0]["reason"] is NSNull)
        #expect(records[0]["key_id"] == nil)
        #expect(records[1]["stream"] as? Int == 3)
        #expect(records[1]["device_token"] as? String == "cd")
        #expect(records[1]["status"] as? Int == 410)
        #expect(records[1]["reason"] as? String == "Unregistered")
        #expect(records[1]["key_id"] as? String == "KEYID12345")
    }
}
