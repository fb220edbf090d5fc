import APNs
import Testing
import TestSupport
import Transport
@testable import apns_bulk

/// Where `channels` sends its requests: Apple's management hosts by environment, not the push
/// hosts `send` means by the same words, and a plain HOST:PORT as given.
@Suite struct ChannelsSetupTests {
    static func endpoint(_ flags: [String]) throws -> Endpoint {
        let directory = try TemporaryDirectory()
        let key = try directory.write("AuthKey_ABC1234567.p8", try SigningKey.generate().pkcs8PEM())
        let options = try ChannelsOptions.parse(["--bundle-id", "com.example.app", "--key-file", key, "--team-id", "TEAM123456",
                                                 "--proxy", ""] + flags)
        return try ChannelsSetup(options).target.endpoint
    }

    @Test func theManagementHostFollowsTheEnvironment() throws {
        let production = Endpoint(host: "api-manage-broadcast.push.apple.com", port: 2196)
        let sandbox = Endpoint(host: "api-manage-broadcast.sandbox.push.apple.com", port: 2195)
        #expect(try Self.endpoint([]) == production)
        #expect(try Self.endpoint(["--endpoint", "production"]) == production)
        #expect(try Self.endpoint(["--environment", "sandbox"]) == sandbox)
        #expect(try Self.endpoint(["--endpoint", "sandbox"]) == sandbox)
        #expect(try Self.endpoint(["--endpoint", "sandbox=127.0.0.1:8444"]) == Endpoint(host: "127.0.0.1", port: 8444))
        #expect(try Self.endpoint(["--environment", "sandbox", "--endpoint", "relay.internal:2195"])
                == Endpoint(host: "relay.internal", port: 2195))
    }
}
