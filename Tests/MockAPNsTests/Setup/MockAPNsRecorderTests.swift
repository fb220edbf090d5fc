import Foundation
import Testing
@testable import MockAPNs

/// The record file's flush timer may fire after the server stopped and closed the file (between
/// `serverStopping` and the reactor's end): that flush must do nothing, not trap.
@Suite struct MockAPNsRecorderTests {
    @Test func aFlushAfterCloseIsIgnoredAndTheFileStaysComplete() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("record-\(UUID().uuidString).jsonl.zst").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recorder = try MockAPNsRecorder(path: path)
        recorder.record(timeMilliseconds: 1, connection: 1, stream: 1, deviceToken: "ab", apnsID: "id", status: 200,
                        reason: nil)
        recorder.close()
        recorder.flush()
        recorder.close()
        #expect(recorder.failure == nil)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        #expect(size > 0, "the record written before close is in the file")
    }
}
