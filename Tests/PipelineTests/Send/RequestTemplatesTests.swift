import APNs
import Testing
import Transport
@testable import Pipeline

/// Rows with header columns of their own: a header set the reader's memo shares among rows is sent
/// through a template of its own from its second row on, with the same fields in the same order.
@Suite struct RequestTemplatesTests {
    private static func headers(_ topic: String, collapseID: String? = nil) -> RowHeaders {
        RowHeaders(try! NotificationHeaders(parsing: HeaderValues(topic: topic, collapseID: collapseID), auth: .token))
    }

    private static func sent(_ request: (template: H2RequestTemplate, fields: [H2Header])) -> [H2Header] {
        request.template.headers + request.fields
    }

    @Test func aSharedHeaderSetBecomesATemplateOnItsSecondRowWithTheSameFields() {
        var sent: [ProviderToken] = []
        let templates = RequestTemplates(token: nil, runHeaders: Self.headers("com.example.run"), sentTokens: &sent)
        let shared = Self.headers("com.example.one", collapseID: "c1")
        let first = templates.request(for: shared)
        #expect(first.fields == shared.fields, "a set seen once goes as the row's own fields")
        let second = templates.request(for: shared)
        #expect(second.fields.isEmpty)
        #expect(Self.sent(second) == Self.sent(first))
        #expect(second.template.headers == shared.fields)
        #expect(templates.request(for: shared).template === second.template, "made once")
    }

    @Test func anotherSetWithEqualValuesIsNotMistakenForOneSeenBefore() {
        var sent: [ProviderToken] = []
        let templates = RequestTemplates(token: nil, runHeaders: nil, sentTokens: &sent)
        let one = Self.headers("com.example.one")
        _ = templates.request(for: one)
        _ = templates.request(for: one)
        let other = Self.headers("com.example.two")
        #expect(templates.request(for: other).fields == other.fields)
        #expect(Self.sent(templates.request(for: other)) == other.fields)
        #expect(Self.sent(templates.request(for: one)) == one.fields)
    }

    @Test func theRunsHeadersGoInTheRunsTemplate() {
        let run = Self.headers("com.example.run")
        var sent: [ProviderToken] = []
        let templates = RequestTemplates(token: nil, runHeaders: run, sentTokens: &sent)
        let request = templates.request(for: nil)
        #expect(request.fields.isEmpty)
        #expect(request.template.headers == run.fields)
    }
}
