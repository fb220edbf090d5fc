import APNs
import Testing

@Suite struct DeviceTokenTests {
    static let token32 = "740f4707bebcf74f9b7c25d48e3358945f6aa01da5ddb387462c7eaf61bb78ad"

    private func hex(bytes count: Int) -> String {
        String((0..<count).flatMap { i -> [Character] in
            let byte = UInt8(truncatingIfNeeded: i &* 37 &+ 11)
            let digits = Array("0123456789abcdef")
            return [digits[Int(byte >> 4)], digits[Int(byte & 0xf)]]
        })
    }

    @Test func thirtyTwoByteTokenKeepsItsBytesAndHex() throws {
        let token = try DeviceToken(hex: Self.token32)
        #expect(token.bytes.count == 32)
        #expect(token.bytes.prefix(3) == [0x74, 0x0f, 0x47])
        #expect(token.hex == Self.token32)
        #expect(token.path == "/3/device/" + Self.token32)
    }

    @Test func uppercaseHexIsTheSameTokenAndIsSentLowercase() throws {
        let upper = try DeviceToken(hex: Self.token32.uppercased())
        #expect(upper == (try DeviceToken(hex: Self.token32)))
        #expect(upper.hex == Self.token32)
    }

    @Test(arguments: [1, 8, 32, 80, 100])
    func tokensOfAnyLengthUpToTheLimitAreAccepted(bytes count: Int) throws {
        let text = hex(bytes: count)
        let token = try DeviceToken(hex: text)
        #expect(token.bytes.count == count)
        #expect(token.hex == text)
        #expect(DeviceToken.check(hex: text) == nil)
    }

    @Test func aTokenOverOneHundredBytesIsRefused() {
        #expect(DeviceToken.check(hex: hex(bytes: 101)) == .tooLong(bytes: 101))
        #expect(throws: DeviceTokenError.tooLong(bytes: 101)) { try DeviceToken(hex: hex(bytes: 101)) }
    }

    @Test(arguments: [
        ("", DeviceTokenError.empty),
        ("abc", .oddLength(hexDigits: 3)),
        (String(DeviceTokenTests.token32.dropLast()), .oddLength(hexDigits: 63)),
        ("zz", .notHex(offset: 0)),
        ("ab cd", .notHex(offset: 2)),
        ("0x740f", .notHex(offset: 1)),
        ("<740f4707>", .notHex(offset: 0)),
        ("740f-4707", .notHex(offset: 4)),
        ("74é0", .notHex(offset: 2)),
        (DeviceTokenTests.token32 + "\n", .notHex(offset: 64)),
    ])
    func malformedHexIsRefusedWithItsReason(text: String, expected: DeviceTokenError) {
        #expect(DeviceToken.check(hex: text) == expected)
        #expect(throws: expected) { try DeviceToken(hex: text) }
    }

    @Test func substringsAreCheckedWithoutCopying() {
        let row = "device," + Self.token32 + ",payload"
        let field = row.split(separator: ",")[1]
        #expect(DeviceToken.check(hex: field) == nil)
        #expect((try? DeviceToken(hex: field))?.hex == Self.token32)
    }

    @Test func bytesAreCheckedForEmptinessAndLength() throws {
        #expect(throws: DeviceTokenError.empty) { try DeviceToken(bytes: []) }
        #expect(throws: DeviceTokenError.tooLong(bytes: 101)) { try DeviceToken(bytes: Array(repeating: 1, count: 101)) }
        #expect(try DeviceToken(bytes: [0xab, 0x01]).hex == "ab01")
    }

    @Test func errorMessagesNameTheProblem() {
        #expect(DeviceTokenError.oddLength(hexDigits: 63).description.contains("63 hex digits"))
        #expect(DeviceTokenError.notHex(offset: 4).description.contains("byte 5"))
        #expect(DeviceTokenError.tooLong(bytes: 101).description.contains("101 bytes"))
        #expect(DeviceTokenError.empty.description == "device token is empty")
    }
}
