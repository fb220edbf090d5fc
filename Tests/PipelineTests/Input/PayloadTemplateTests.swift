import Testing
import TestSupport
@testable import Pipeline

/// The template is split once into literals and placeholders; rows fill it.
@Suite struct PayloadTemplateTests {
    @Test func aTemplateIsSplitOnceIntoLiteralsAndPlaceholdersWithSpacesAndEscapedQuotesHandled() throws {
        let template = try PayloadTemplate(json: Array(#"{"a":"\"{{ Name }}\\","b":"{{x}}{{name}}"}"#.utf8))
        #expect(template.columns == ["name", "x"])
        #expect(template.parts.count == 6)
        #expect(String(decoding: template.emptyFilled, as: UTF8.self) == #"{"a":"\"\\","b":""}"#)
        #expect(template.extraColumns == ["name", "x"])
        let known = try PayloadTemplate(json: Array(#"{"t":"{{topic}} {{device_token}}"}"#.utf8))
        #expect(known.extraColumns.isEmpty)
    }

    @Test func aPlaceholderOutsideAStringIsRefusedWithItsLineAndColumn() {
        // The escaped quote does not end the string before it.
        #expect(throws: PayloadTemplate.Problem.outsideString(name: "n", line: 2, column: 5)) {
            try PayloadTemplate(json: Array("{\"s\":\"}\\\"{\",\n\"a\":{{n}}}".utf8))
        }
    }

    @Test func rowsFillThePlaceholdersEscapedAndAMissingFieldEmpty() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv", "device_token,Name,topic\nab,\"q\"\"\\\u{1}\",t\nab\n")
        let template = try PayloadTemplate(json: Array(#"{"a":"<{{name}}|{{topic}}>"}"#.utf8))
        let source = try CSVSource(path: path, extraColumns: template.extraColumns)
        let bound = try template.bind(to: source.header)
        let batch = try #require(try source.nextBatch())
        #expect(String(decoding: bound.fill(batch, at: 0), as: UTF8.self) == #"{"a":"<q\"\\\u0001|t>"}"#)
        #expect(String(decoding: bound.fill(batch, at: 1), as: UTF8.self) == #"{"a":"<|>"}"#)
    }

    @Test func aTemplateFilesFinalNewlineIsNotPartOfThePayload() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("c.csv", "device_token,name\nab,Ann\n")
        let template = try PayloadTemplate(json: Array("{\"a\":\"{{name}}\"}\r\n \n".utf8))
        let source = try CSVSource(path: path, extraColumns: template.extraColumns)
        let batch = try #require(try source.nextBatch())
        #expect(String(decoding: try template.bind(to: source.header).fill(batch, at: 0), as: UTF8.self) == #"{"a":"Ann"}"#)
        #expect(String(decoding: template.emptyFilled, as: UTF8.self) == #"{"a":""}"#)
    }
}
