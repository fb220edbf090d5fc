import Foundation
import Testing
import Transport
@testable import apns_bulk

/// The channel-management requests as Apple's pages write them, the answers `list` and `show`
/// read, and the local checks of what goes into a request's path and headers.
@Suite struct ChannelManagementAPITests {
    @Test func createPostsThePolicyAndPushTypeToTheAppsChannels() throws {
        let request = ChannelManagementAPI.create(bundleID: "com.example.app", policy: .noStorage)
        #expect(request.method == "POST" && request.path == "/1/apps/com.example.app/channels" && request.headers.isEmpty)
        let body = try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any]
        #expect(body?["message-storage-policy"] as? Int == 0 && body?["push-type"] as? String == "LiveActivity")
        let stored = ChannelManagementAPI.create(bundleID: "com.example.app", policy: .mostRecent)
        #expect(String(decoding: stored.body, as: UTF8.self) == #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#)
    }

    @Test func readAndDeleteNameTheChannelInItsHeaderAndListAsksForAllChannels() {
        let read = ChannelManagementAPI.read(bundleID: "com.example.app", channelID: "dHN0LXNyY2gtY2hubA==")
        let delete = ChannelManagementAPI.delete(bundleID: "com.example.app", channelID: "dHN0LXNyY2gtY2hubA==")
        let list = ChannelManagementAPI.listAll(bundleID: "com.example.app")
        #expect(read.method == "GET" && delete.method == "DELETE" && list.method == "GET")
        #expect(read.path == "/1/apps/com.example.app/channels" && delete.path == read.path)
        #expect(list.path == "/1/apps/com.example.app/all-channels" && list.headers.isEmpty)
        for request in [read, delete] {
            #expect(request.headers == [H2Header("apns-channel-id", "dHN0LXNyY2gtY2hubA==")] && request.body.isEmpty)
        }
    }

    @Test func showPrintsAPNsValuesUnderItsOwnKeysWithTheIDAsGiven() throws {
        let line = try #require(ChannelManagementAPI.showLine(channelID: "ab/cd+ef==",
                                                              body: Array(#"{"message-storage-policy": 1, "push-type": "LiveActivity"}"#.utf8)))
        #expect(line == #"{"channel_id":"ab/cd+ef==","message_storage_policy":1,"push_type":"LiveActivity"}"#)
        for body in ["", "[]", #"{"push-type": "LiveActivity"}"#, #"{"message-storage-policy": 2, "push-type": "LiveActivity"}"#,
                     #"{"message-storage-policy": "1", "push-type": "LiveActivity"}"#] {
            #expect(ChannelManagementAPI.showLine(channelID: "a", body: Array(body.utf8)) == nil, "\(body)")
        }
    }

    @Test func aListAnswerGivesItsChannelIDsInOrderAndAnythingElseNone() {
        #expect(ChannelManagementAPI.channelIDs(inList: Array(#"{"channels": ["b==", "a/+="]}"#.utf8)) == ["b==", "a/+="])
        #expect(ChannelManagementAPI.channelIDs(inList: Array(#"{"channels": []}"#.utf8)) == [])
        for body in ["", "{}", #"{"channels": [1]}"#, #"{"channels": "a"}"#] {
            #expect(ChannelManagementAPI.channelIDs(inList: Array(body.utf8)) == nil, "\(body)")
        }
    }

    @Test func aBundleIDOrChannelIDThatCannotBeOneIsRefusedNamingItsFlag() {
        #expect(ChannelManagementAPI.problem(bundleID: "com.example.app-2") == nil)
        #expect(ChannelManagementAPI.problem(channelID: "dHN0LXNyY2gtY2hubA==") == nil)
        for bad in ["", "com.example/../x", "com example", "com.example.app.push-type.liveactivity"] {
            #expect(ChannelManagementAPI.problem(bundleID: bad)?.contains("--bundle-id") == true, "\(bad)")
        }
        for bad in ["", "abc def", "abc\r\nx: y", "ab_c"] {
            #expect(ChannelManagementAPI.problem(channelID: bad)?.contains("--channel-id") == true, "\(bad)")
        }
    }

    @Test func eachChannelsSubcommandsHelpEndsWithItsOwnExamples() {
        let help = "OVERVIEW: x\n\nUSAGE: apns-bulk channels create --bundle-id <bundle-id>\n"
        #expect(HelpExamples.appended(to: help).contains("--storage-policy no-storage"))
        let parent = "OVERVIEW: x\n\nUSAGE: apns-bulk channels <subcommand>\n"
        #expect(HelpExamples.appended(to: parent).contains("apns-bulk channels list"))
    }
}
