import Foundation
import Testing
@testable import APNs

@Suite struct Base64URLTests {
    @Test(arguments: [0, 1, 2, 3, 4, 5, 31, 32, 33, 64, 255])
    func encodingMatchesFoundationWithURLAlphabetAndNoPadding(_ length: Int) throws {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let expected = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        #expect(Base64URL.encode(bytes) == expected)
        #expect(Base64URL.decode(expected) == bytes)
    }

    @Test func knownVectorsFromRFC4648() {
        #expect(Base64URL.encode(Array("f".utf8)) == "Zg")
        #expect(Base64URL.encode(Array("fo".utf8)) == "Zm8")
        #expect(Base64URL.encode(Array("foo".utf8)) == "Zm9v")
        #expect(Base64URL.encode(Array("foob".utf8)) == "Zm9vYg")
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
    }

    @Test(arguments: ["Zg==", "Zm9v+", "Zm9v/", "Z", "Zm9vY", "Zh", "Zm9 v", "Zm\n9v"])
    func decodingRefusesNonCanonicalText(_ text: String) {
        #expect(Base64URL.decode(text) == nil)
    }
}
