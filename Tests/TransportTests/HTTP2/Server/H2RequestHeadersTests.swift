import Testing
import Transport

@Suite struct H2RequestHeadersTests {
    let fields = [
        H2Field(name: ":method", value: "POST"),
        H2Field(name: "authorization", value: "bearer abc.def.ghi", neverIndexed: true),
        H2Field(name: "apns-topic", value: "a"),
        H2Field(name: "apns-topic", value: ""),
        H2Field(name: "apns-id", value: "x"),
    ]

    @Test func fieldsComeBackInArrivalOrderWithFlagsAndRepeats() {
        let headers = H2RequestHeaders(fields)
        #expect(headers.count == 5)
        #expect(headers.fields == fields)
        #expect(headers.isNeverIndexed(at: 1))
        #expect(!headers.isNeverIndexed(at: 2))
    }

    @Test func namesCompareByExactBytes() {
        let headers = H2RequestHeaders(fields)
        #expect(headers.name(at: 2, is: "apns-topic"))
        #expect(!headers.name(at: 2, is: "apns-topi"))
        #expect(!headers.name(at: 4, is: "apns-topic"))
        #expect(!headers.name(at: 4, is: "apns-ie"))
        #expect(headers.nameFirstByte(at: 0) == UInt8(ascii: ":"))
        #expect(headers.name(at: 1) == "authorization")
    }

    @Test func valuesOfANameListEveryOccurrenceIncludingEmptyOnes() {
        let headers = H2RequestHeaders(fields)
        #expect(headers.values(of: "apns-topic") == ["a", ""])
        #expect(headers.values(of: "apns-id") == ["x"])
        #expect(headers.values(of: "apns-i").isEmpty)
        #expect(headers.value(at: 1) == "bearer abc.def.ghi")
    }
}
