import APNs
import Testing

/// A row of text, as the CSV row decoder hands it over.
struct Row: Sendable, CustomTestStringConvertible {
    let name: String
    var token = "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"
    var payload: [UInt8] = Array("{\"aps\":{\"alert\":\"hi\"}}".utf8)
    var headers = HeaderValues(topic: "com.example.app")
    var auth = AuthKind.token
    let expected: Reason?
    var testDescription: String { name }

    init(_ name: String, _ expected: Reason?, _ change: (inout Row) -> Void = { _ in }) {
        self.name = name
        self.expected = expected
        change(&self)
    }
}

private func topic(for type: PushType) -> String { "com.example.app" + (type.topicSuffix ?? "") }

let rows: [Row] = [
    Row("plain alert with token auth", nil),
    Row("certificate auth without topic", nil) { $0.auth = .certificate; $0.headers.topic = nil },
    Row("certificate auth with empty topic", nil) { $0.auth = .certificate; $0.headers.topic = "" },
    Row("token auth without topic", .missingTopic) { $0.headers.topic = nil },
    Row("token auth with empty topic", .missingTopic) { $0.headers.topic = "" },
    Row("bad device token", .badDeviceToken) { $0.token = "xyz" },
    Row("empty device token", .badDeviceToken) { $0.token = "" },
    Row("bad device token is reported before a missing topic", .badDeviceToken) { $0.token = "abc"; $0.headers.topic = nil },
    Row("missing topic is reported before a bad priority", .missingTopic) { $0.headers.topic = nil; $0.headers.priority = "7" },
    Row("unknown push type", .invalidPushType) { $0.headers.pushType = "foo" },
    Row("uppercase push type", .invalidPushType) { $0.headers.pushType = "ALERT" },
    Row("unknown push type without topic is a missing topic first", .missingTopic) { $0.headers.pushType = "foo"; $0.headers.topic = nil },
    Row("empty push type means alert", nil) { $0.headers.pushType = "" },
    Row("priority 7", .badPriority) { $0.headers.priority = "7" },
    Row("priority 5", nil) { $0.headers.priority = "5" },
    Row("priority 1", nil) { $0.headers.priority = "1" },
    Row("background at priority 10", .badPriority) { $0.headers.pushType = "background"; $0.headers.priority = "10" },
    Row("background at priority 1", .badPriority) { $0.headers.pushType = "background"; $0.headers.priority = "1" },
    Row("background at priority 5", nil) { $0.headers.pushType = "background"; $0.headers.priority = "5" },
    Row("background without priority takes 5", nil) { $0.headers.pushType = "background" },
    Row("expiration abc", .badExpirationDate) { $0.headers.expiration = "abc" },
    Row("negative expiration", .badExpirationDate) { $0.headers.expiration = "-1" },
    Row("expiration 0", nil) { $0.headers.expiration = "0" },
    Row("expiration in epoch seconds", nil) { $0.headers.expiration = "1900000000" },
    Row("uppercase apns-id", .badMessageId) { $0.headers.apnsID = "123E4567-E89B-12D3-A456-426614174000" },
    Row("apns-id without hyphens", .badMessageId) { $0.headers.apnsID = "123e4567e89b12d3a456426614174000" },
    Row("canonical apns-id", nil) { $0.headers.apnsID = "123e4567-e89b-12d3-a456-426614174000" },
    Row("64-byte collapse id", nil) { $0.headers.collapseID = String(repeating: "c", count: 64) },
    Row("65-byte collapse id", .badCollapseId) { $0.headers.collapseID = String(repeating: "c", count: 65) },
    Row("empty payload", .payloadEmpty) { $0.payload = [] },
    Row("4096-byte payload", nil) { $0.payload = payload(bytes: 4096) },
    Row("4097-byte payload", .payloadTooLarge) { $0.payload = payload(bytes: 4097) },
    Row("5120-byte voip payload", nil) { $0.payload = payload(bytes: 5120); $0.headers.pushType = "voip"; $0.headers.topic = topic(for: .voip) },
    Row("5121-byte voip payload", .payloadTooLarge) { $0.payload = payload(bytes: 5121); $0.headers.pushType = "voip"; $0.headers.topic = topic(for: .voip) },
    Row("5120-byte pushtotalk payload", .payloadTooLarge) { $0.payload = payload(bytes: 5120); $0.headers.pushType = "pushtotalk"; $0.headers.topic = topic(for: .pushtotalk) },
    Row("payload that is an array", .invalidPayload) { $0.payload = Array("[{\"aps\":{}}]".utf8) },
    Row("payload cut short", .invalidPayload) { $0.payload = Array("{\"aps\":{\"alert\":\"hi\"}".utf8) },
    Row("payload with a trailing comma", .invalidPayload) { $0.payload = Array("{\"aps\":{},}".utf8) },
    Row("payload with invalid UTF-8", .invalidPayload) { $0.payload = Array("{\"a\":\"".utf8) + [0xC0, 0x80] + Array("\"}".utf8) },
] + PushType.allCases.flatMap { type -> [Row] in
    let wrongTopic = switch type {
    case .mdm: ""  // any topic suits mdm; an empty one is missing
    case .alert, .background: "com.example.app.voip"
    default: "com.example.app"
    }
    return [
        Row("\(type) with its own topic", nil) { $0.headers.pushType = type.headerValue; $0.headers.topic = topic(for: type) },
        Row("\(type) with topic \(wrongTopic)", type == .mdm ? .missingTopic : .badTopic) {
            $0.headers.pushType = type.headerValue
            $0.headers.topic = wrongTopic
        },
    ]
}

@Suite struct NotificationTests {
    @Test(arguments: rows)
    func rowIsAcceptedOrRejectedWithAPNsReason(row: Row) {
        do {
            let notification = try Notification(deviceTokenHex: row.token, payload: row.payload,
                                                headers: row.headers, auth: row.auth)
            #expect(row.expected == nil, "accepted, expected \(row.expected.map(\.name) ?? "")")
            #expect(notification.validate(auth: row.auth) == nil)
        } catch {
            #expect(error.reason == row.expected, "\(error)")
            #expect(!error.detail.isEmpty)
        }
    }

    @Test func textIsTurnedIntoTypedHeaders() throws {
        let notification = try Notification(
            deviceTokenHex: "ABCDEF01", payload: Array("{}".utf8),
            headers: HeaderValues(topic: "com.example.app.voip", pushType: "voip", priority: "5",
                                  expiration: "0", collapseID: "group-1",
                                  apnsID: "123e4567-e89b-12d3-a456-426614174000"),
            auth: .token)
        #expect(notification.deviceToken.hex == "abcdef01")
        #expect(notification.pushType == .voip)
        #expect(notification.priority == .powerConsidered)
        #expect(notification.expiration == 0)
        #expect(notification.collapseID == "group-1")
        #expect(notification.apnsID == "123e4567-e89b-12d3-a456-426614174000")
        #expect(notification.topic == "com.example.app.voip")
    }

    @Test func defaultsAreAlertAtPriorityTenWithoutOptionalHeaders() throws {
        let notification = try Notification(deviceTokenHex: "abcd", payload: Array("{}".utf8),
                                            headers: HeaderValues(topic: "com.example.app", expiration: "",
                                                                  collapseID: "", apnsID: ""),
                                            auth: .token)
        #expect(notification.pushType == .alert)
        #expect(notification.priority == .immediate)
        #expect(notification.expiration == nil && notification.collapseID == nil && notification.apnsID == nil)
    }

    @Test func typedNotificationIsValidatedToo() throws {
        let token = try DeviceToken(hex: "abcd")
        let good = Notification(deviceToken: token, payload: Array("{}".utf8), topic: "com.example.app")
        #expect(good.validate(auth: .token) == nil)

        var background = good
        background.pushType = .background
        #expect(background.validate(auth: .token)?.reason == .badPriority)
        background.priority = .powerConsidered
        #expect(background.validate(auth: .token) == nil)
        #expect(Notification(deviceToken: token, payload: Array("{}".utf8), topic: "com.example.app",
                             pushType: .background).priority == .powerConsidered)

        var expired = good
        expired.expiration = -5
        #expect(expired.validate(auth: .token)?.reason == .badExpirationDate)

        var emptyCollapse = good
        emptyCollapse.collapseID = ""
        #expect(emptyCollapse.validate(auth: .token)?.reason == .badCollapseId)

        var noTopic = good
        noTopic.topic = nil
        #expect(noTopic.validate(auth: .token)?.reason == .missingTopic)
        #expect(noTopic.validate(auth: .certificate) == nil)
    }

    @Test func rejectionDetailsNameTheValue() {
        func rejection(_ change: (inout HeaderValues) -> Void, payload: [UInt8] = Array("{}".utf8)) -> Rejection? {
            var headers = HeaderValues(topic: "com.example.app")
            change(&headers)
            do {
                _ = try Notification(deviceTokenHex: "abcd", payload: payload, headers: headers, auth: .token)
                return nil
            } catch {
                return error
            }
        }
        #expect(rejection { $0.priority = "7" }?.detail.contains("\"7\"") == true)
        #expect(rejection { $0.pushType = "foo" }?.detail.contains("\"foo\"") == true)
        #expect(rejection { $0.pushType = "voip" }?.detail.contains(".voip") == true)
        #expect(rejection { $0.expiration = "abc" }?.detail.contains("\"abc\"") == true)
        #expect(rejection { $0.collapseID = String(repeating: "c", count: 65) }?.detail.contains("65 bytes") == true)
        #expect(rejection({ _ in }, payload: payload(bytes: 4097))?.detail.contains("4097 bytes") == true)
        #expect(rejection({ _ in }, payload: Array("{\"a\":01}".utf8))?.description
                == "InvalidPayload: payload is not a JSON object: invalid number at byte 7")
    }
}
