import APNs
import Testing

/// One document of the corpus: its bytes and what it shows.
struct JSONCase: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    var testDescription: String { name }

    init(_ name: String, _ text: String) {
        self.name = name
        self.bytes = Array(text.utf8)
    }

    init(_ name: String, _ parts: [UInt8]...) {
        self.name = name
        self.bytes = parts.flatMap { $0 }
    }
}

private func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A string member whose value is `raw` bytes between the quotes: `{"a":"<raw>"}`.
private func stringWith(_ raw: [UInt8]) -> [UInt8] { utf8("{\"a\":\"") + raw + utf8("\"}") }

private func nested(depth: Int) -> String {
    // The object counts as one level, each array as another.
    "{\"a\":" + String(repeating: "[", count: depth - 1) + String(repeating: "]", count: depth - 1) + "}"
}

let validJSON: [JSONCase] = [
    JSONCase("empty object", "{}"),
    JSONCase("object with whitespace around", " \t\n\r{} \n"),
    JSONCase("one integer member", "{\"a\":1}"),
    JSONCase("typical aps payload", "{\"aps\":{\"alert\":\"hi\"}}"),
    JSONCase("rich aps payload", "{\"aps\":{\"alert\":{\"title\":\"T\",\"body\":\"B\"},\"badge\":1,\"sound\":\"default\"},\"custom\":[1,\"x\",{\"y\":null}]}"),
    JSONCase("empty array", "{\"a\":[]}"),
    JSONCase("array of numbers", "{\"a\":[1,2,3]}"),
    JSONCase("empty nested object", "{\"a\":{}}"),
    JSONCase("literals", "{\"a\":null,\"b\":true,\"c\":false}"),
    JSONCase("zero", "{\"a\":0}"),
    JSONCase("negative zero", "{\"a\":-0}"),
    JSONCase("fraction", "{\"a\":0.5}"),
    JSONCase("negative fraction with exponent", "{\"a\":-1.25e10}"),
    JSONCase("uppercase exponent", "{\"a\":1E5}"),
    JSONCase("exponent with plus", "{\"a\":1e+5}"),
    JSONCase("exponent with minus", "{\"a\":1e-5}"),
    JSONCase("zero exponent of zero", "{\"a\":0e0}"),
    JSONCase("negative zero fraction exponent", "{\"a\":-0.0e-0}"),
    JSONCase("huge integer", "{\"a\":123456789012345678901234567890}"),
    JSONCase("all simple escapes", "{\"a\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}"),
    JSONCase("unicode escape", "{\"a\":\"\\u0041\"}"),
    JSONCase("unicode escape mixed case hex", "{\"a\":\"\\u00eA\"}"),
    JSONCase("escaped NUL", "{\"a\":\"\\u0000\"}"),
    JSONCase("escaped quote by unicode", "{\"a\":\"\\u0022\"}"),
    JSONCase("surrogate pair escape", "{\"a\":\"\\uD83D\\uDE00\"}"),
    JSONCase("surrogate pair escape lowercase", "{\"a\":\"\\ud83d\\ude00\"}"),
    JSONCase("empty key and value", "{\"\":\"\"}"),
    JSONCase("2-byte UTF-8 lowest", stringWith([0xC2, 0x80])),
    JSONCase("2-byte UTF-8 é", "{\"a\":\"é\"}"),
    JSONCase("3-byte UTF-8 lowest", stringWith([0xE0, 0xA0, 0x80])),
    JSONCase("3-byte UTF-8 €", "{\"a\":\"€\"}"),
    JSONCase("3-byte UTF-8 last before surrogates", stringWith([0xED, 0x9F, 0xBF])),
    JSONCase("3-byte UTF-8 first after surrogates", stringWith([0xEE, 0x80, 0x80])),
    JSONCase("4-byte UTF-8 lowest", stringWith([0xF0, 0x90, 0x80, 0x80])),
    JSONCase("4-byte UTF-8 emoji", "{\"a\":\"😀\"}"),
    JSONCase("4-byte UTF-8 highest U+10FFFF", stringWith([0xF4, 0x8F, 0xBF, 0xBF])),
    JSONCase("raw DEL in string", stringWith([0x7F])),
    JSONCase("solidus unescaped", "{\"a\":\"/\"}"),
    JSONCase("whitespace everywhere", " {\r\n\t\"a\" :\t[ 1 , 2 ] ,\n\"b\" : { } } "),
    JSONCase("deep arrays", "{\"a\":[[[[]]]]}"),
    JSONCase("objects in arrays", "{\"a\":[{},{\"b\":[null]}]}"),
    JSONCase("duplicate keys", "{\"a\":1,\"a\":2}"),
    JSONCase("string holding braces", "{\"a\":\"}{][,:\"}"),
    JSONCase("nesting at the depth limit", nested(depth: Limits.jsonDepth)),
]

let invalidJSON: [JSONCase] = [
    JSONCase("empty", ""),
    JSONCase("whitespace only", "  \n"),
    JSONCase("top-level array", "[]"),
    JSONCase("top-level array of one", "[1]"),
    JSONCase("top-level string", "\"s\""),
    JSONCase("top-level number", "1"),
    JSONCase("top-level true", "true"),
    JSONCase("top-level null", "null"),
    JSONCase("open brace only", "{"),
    JSONCase("key without colon at end", "{\"a\""),
    JSONCase("colon at end", "{\"a\":"),
    JSONCase("missing closing brace", "{\"a\":1"),
    JSONCase("comma at end", "{\"a\":1,"),
    JSONCase("trailing comma in object", "{\"a\":1,}"),
    JSONCase("lone comma", "{,}"),
    JSONCase("missing colon", "{\"a\" 1}"),
    JSONCase("missing comma", "{\"a\":1 \"b\":2}"),
    JSONCase("double colon", "{\"a\"::1}"),
    JSONCase("double comma", "{\"a\":1,,\"b\":2}"),
    JSONCase("key without value", "{\"a\":1,\"b\"}"),
    JSONCase("unquoted key", "{a:1}"),
    JSONCase("single-quoted key", "{'a':1}"),
    JSONCase("number key", "{1:1}"),
    JSONCase("leading zero", "{\"a\":01}"),
    JSONCase("negative leading zero", "{\"a\":-01}"),
    JSONCase("plus sign", "{\"a\":+1}"),
    JSONCase("no integer part", "{\"a\":.5}"),
    JSONCase("no fraction digits", "{\"a\":1.}"),
    JSONCase("no fraction digits before exponent", "{\"a\":1.e5}"),
    JSONCase("no exponent digits", "{\"a\":1e}"),
    JSONCase("no exponent digits after sign", "{\"a\":1e+}"),
    JSONCase("minus alone", "{\"a\":-}"),
    JSONCase("double minus", "{\"a\":--1}"),
    JSONCase("hex number", "{\"a\":0x10}"),
    JSONCase("Infinity", "{\"a\":Infinity}"),
    JSONCase("NaN", "{\"a\":NaN}"),
    JSONCase("truncated true", "{\"a\":tru}"),
    JSONCase("true with extra letter", "{\"a\":truee}"),
    JSONCase("uppercase TRUE", "{\"a\":TRUE}"),
    JSONCase("truncated null", "{\"a\":nul}"),
    JSONCase("bad escape letter", "{\"a\":\"\\x\"}"),
    JSONCase("short unicode escape", "{\"a\":\"\\u12\"}"),
    JSONCase("non-hex unicode escape", "{\"a\":\"\\u12G4\"}"),
    JSONCase("unicode escape cut at end", "{\"a\":\"\\u00"),
    JSONCase("backslash at end", "{\"a\":\"\\"),
    JSONCase("lone high surrogate", "{\"a\":\"\\uD800\"}"),
    JSONCase("lone low surrogate", "{\"a\":\"\\uDC00\"}"),
    JSONCase("high surrogate then non-surrogate", "{\"a\":\"\\uD800\\u0041\"}"),
    JSONCase("high surrogate then text", "{\"a\":\"\\uD800x\"}"),
    JSONCase("two high surrogates", "{\"a\":\"\\uD800\\uD800\"}"),
    JSONCase("raw tab in string", "{\"a\":\"a\tb\"}"),
    JSONCase("raw newline in string", "{\"a\":\"a\nb\"}"),
    JSONCase("raw NUL in string", stringWith([0x00])),
    JSONCase("unterminated string", "{\"a\":\"abc}"),
    JSONCase("overlong 2-byte NUL", stringWith([0xC0, 0x80])),
    JSONCase("overlong 2-byte C1", stringWith([0xC1, 0xBF])),
    JSONCase("overlong 3-byte", stringWith([0xE0, 0x80, 0x80])),
    JSONCase("overlong 4-byte", stringWith([0xF0, 0x80, 0x80, 0x80])),
    JSONCase("UTF-8 encoded high surrogate", stringWith([0xED, 0xA0, 0x80])),
    JSONCase("UTF-8 encoded low surrogate", stringWith([0xED, 0xBF, 0xBF])),
    JSONCase("beyond U+10FFFF", stringWith([0xF4, 0x90, 0x80, 0x80])),
    JSONCase("lead byte F5", stringWith([0xF5, 0x80, 0x80, 0x80])),
    JSONCase("byte FF", stringWith([0xFF])),
    JSONCase("stray continuation byte", stringWith([0x80])),
    JSONCase("2-byte sequence cut by quote", stringWith([0xC3])),
    JSONCase("3-byte sequence cut by quote", stringWith([0xE2, 0x82])),
    JSONCase("4-byte sequence cut by quote", stringWith([0xF0, 0x9F, 0x98])),
    JSONCase("multi-byte sequence cut at end of input", utf8("{\"a\":\"") + [0xE2, 0x82]),
    JSONCase("continuation replaced by ASCII", stringWith([0xC3, 0x41])),
    JSONCase("non-ASCII outside a string", utf8("{") + [0xC3, 0xA9] + utf8(":1}")),
    JSONCase("extra closing brace", "{\"a\":1}}"),
    JSONCase("trailing letter", "{\"a\":1}x"),
    JSONCase("two objects", "{\"a\":1}{}"),
    JSONCase("trailing NUL", utf8("{}") + [0x00]),
    JSONCase("byte order mark", [0xEF, 0xBB, 0xBF], utf8("{}")),
    JSONCase("comment after", "{\"a\":1}/* c */"),
    JSONCase("trailing comma in array", "{\"a\":[1,]}"),
    JSONCase("leading comma in array", "{\"a\":[,1]}"),
    JSONCase("missing comma in array", "{\"a\":[1 2]}"),
    JSONCase("array closed by brace", "{\"a\":[}"),
    JSONCase("object closed by bracket", "{\"a\":{]}"),
    JSONCase("bracket instead of value", "{\"a\":]"),
    JSONCase("colon in array", "{\"a\":[1:2]}"),
    JSONCase("form feed is not whitespace", "{\u{0C}}"),
    JSONCase("nesting one past the depth limit", nested(depth: Limits.jsonDepth + 1)),
]

@Suite struct JSONValidatorTests {
    @Test(arguments: validJSON)
    func acceptsValidObject(_ document: JSONCase) {
        #expect(JSONValidator.validate(document.bytes) == nil)
    }

    @Test(arguments: invalidJSON)
    func rejectsInvalidDocument(_ document: JSONCase) {
        #expect(JSONValidator.validate(document.bytes) != nil)
        #expect(!JSONValidator.isJSONObject(document.bytes))
    }

    @Test func nonContiguousCollectionsAreValidatedLikeArrays() {
        for document in validJSON + invalidJSON {
            #expect(JSONValidator.validate(AnyCollection(document.bytes)) == JSONValidator.validate(document.bytes),
                    "\(document.name)")
        }
    }

    @Test func errorsNameTheirKindAndOffset() {
        func error(_ text: String) -> JSONError? { JSONValidator.validate(Array(text.utf8)) }
        #expect(error("") == JSONError(kind: .empty, offset: 0))
        #expect(error(" [1]") == JSONError(kind: .notAnObject, offset: 1))
        #expect(error("{\"a\":01}") == JSONError(kind: .invalidNumber, offset: 6))
        #expect(error("{\"a\":\"\\uD800\"}") == JSONError(kind: .loneSurrogate, offset: 6))
        #expect(error("{\"a\":\"\\q\"}") == JSONError(kind: .invalidEscape, offset: 6))
        #expect(error("{\"a\":\"\t\"}") == JSONError(kind: .controlCharacterInString, offset: 6))
        #expect(error("{} x") == JSONError(kind: .trailingData, offset: 3))
        #expect(error("{\"a\":1") == JSONError(kind: .unexpectedEnd, offset: 6))
        #expect(JSONValidator.validate(stringWith([0xED, 0xA0, 0x80])) == JSONError(kind: .invalidUTF8, offset: 6))
        #expect(error(nested(depth: Limits.jsonDepth + 1))?.kind == .tooDeep)
    }

    @Test func errorDescriptionSaysWhatAndWhere() {
        let error = JSONValidator.validate(Array("{\"a\":01}".utf8))
        #expect(error?.description == "payload is not a JSON object: invalid number at byte 7")
    }

    @Test func maximumSizePayloadValidatesRepeatedly() {
        // A 4096-byte payload full of escapes and multi-byte characters, validated many times:
        // the validator keeps no state between calls.
        let unit = "{\"k\":\"é€😀\\n\\u00e9\",\"n\":[-1.5e3,true,null]},"
        var body = "{\"aps\":{\"alert\":\"hi\"},\"items\":["
        while body.utf8.count + unit.utf8.count + 3 < Limits.payloadBytes { body += unit }
        body += "{}]}"
        let bytes = Array(body.utf8)
        #expect(bytes.count <= Limits.payloadBytes && bytes.count > 4000)
        var accepted = 0
        for _ in 0..<2_000 where JSONValidator.validate(bytes) == nil { accepted += 1 }
        #expect(accepted == 2_000)
        #expect(JSONValidator.validate(bytes.dropLast()) != nil)
    }
}
