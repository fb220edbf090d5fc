import Testing
@testable import Transport

/// `H2RepeatedText`: a connection's repeated `:method`, `:authority` and `:path` give back the
/// last value's `String`; a changed value (a device push's path, new with each token) its own.
@Suite struct H2RepeatedTextTests {
    static func text(_ repeated: inout H2RepeatedText, _ value: String) -> String {
        Array(value.utf8).withUnsafeBufferPointer { repeated.text($0) }
    }

    @Test func eachValueReadsBackAsItsOwnTextWhetherRepeatedOrNew() {
        var repeated = H2RepeatedText()
        let values = ["POST", "POST", "127.0.0.1:44041", "/4/broadcasts/apps/com.example.app",
                      "/4/broadcasts/apps/com.example.app", "/4/broadcasts/apps/com.example.apq",
                      "/3/device/" + String(repeating: "ab", count: 32), "/3/device/" + String(repeating: "cd", count: 32),
                      "", "", "é", "POST"]
        for value in values { #expect(Self.text(&repeated, value) == value) }
    }
}
