import APNs
import Transport

/// What every request of the current provider token shares, encoded once per token: the
/// `authorization` header, and with it the run's own header values for the rows that use them.
/// A worker keeps one and makes a new one when the token changes. Used on one reactor thread.
final class RequestTemplates {
    let jwt: String?
    /// The token's index in the worker's `sentTokens`, for the jobs that carry it (`Job.sentToken`;
    /// nil with certificate authentication).
    let sentIndex: UInt32?
    let authorization: [H2Header]
    /// `authorization` only: rows with header columns of their own add theirs.
    let authorizationOnly: H2RequestTemplate
    /// `authorization` and the run's header values; made on the first row that uses them.
    private var runDefault: H2RequestTemplate?
    /// `runDefault` and then a field with each row's input token (`RowHeaders.inputTokenField`).
    private var runWithInputToken: H2RequestTemplate?
    private let runHeaders: RowHeaders?

    /// Every request's `:path` before its row's token: `/3/device/`, or a broadcast's whole path.
    private let pathPrefix: String

    /// `token` is added to `sentTokens`, the worker's list of every token its requests carried.
    init(token: ProviderToken?, runHeaders: RowHeaders?, pathPrefix: String = "/3/device/",
         sentTokens: inout [ProviderToken]) {
        self.runHeaders = runHeaders
        self.pathPrefix = pathPrefix
        jwt = token?.jwt
        if let token {
            sentTokens.append(token)
            sentIndex = UInt32(truncatingIfNeeded: sentTokens.count - 1)
        } else {
            sentIndex = nil
        }
        authorization = token.map { [H2Header("authorization", "bearer " + $0.jwt, rules: .apple)] } ?? []
        authorizationOnly = H2RequestTemplate(pathPrefix: pathPrefix, headers: authorization)
    }

    /// The template for a job with the run's headers.
    private func runTemplate() -> H2RequestTemplate {
        if let runDefault { return runDefault }
        let made = H2RequestTemplate(pathPrefix: pathPrefix, headers: authorization + (runHeaders?.fields ?? []))
        runDefault = made
        return made
    }

    /// Makes the template for rows whose input token is a header field's value: the run's fields
    /// and it (once; `request(for:)` returns it from then on).
    @inline(never)
    private func makeRunTemplate(inputTokenField: String?) -> H2RequestTemplate {
        let made = H2RequestTemplate(pathPrefix: pathPrefix, headers: authorization + (runHeaders?.fields ?? []),
                                     suffixField: inputTokenField)
        runWithInputToken = made
        return made
    }

    /// Rows' own header sets seen, and the templates made of them, by object. The reader's memo
    /// (`RowHeadersMemo`) gives rows with equal header columns one `RowHeaders`, so a campaign with
    /// a topic column has a few of them: each becomes a template on its second row (a set seen
    /// once, as a row's own apns-id makes it, is not worth encoding), and its rows then send no
    /// field of their own, so their strings are not copied per row into the session's header
    /// block and again by nghttp2 (a retain and release of each value on the way).
    private var ownSeen: [RowHeaders?] = Array(repeating: nil, count: ownSlots)
    private var ownMade: [H2RequestTemplate?] = Array(repeating: nil, count: ownSlots)
    private static let ownSlots = 64

    /// The template for a job with these headers of its own (nil: the run's), and the fields its
    /// request adds after the template's. A template with a suffix field takes the row's input
    /// token as its request's suffix (the caller's part), `:path` the row's path token otherwise.
    func request(for ownHeaders: RowHeaders?) -> (template: H2RequestTemplate, fields: [H2Header]) {
        guard let ownHeaders else { return (runTemplate(), []) }
        // Tested for nil, not bound, and the made template returned before `ownHeaders` is passed on:
        // each costs a retain and a release a row (of the headers every broadcast row shares with the reader).
        if ownHeaders.inputTokenField != nil {
            if let runWithInputToken { return (runWithInputToken, []) }
            return (makeRunTemplate(inputTokenField: ownHeaders.inputTokenField), [])
        }
        if ownHeaders.extendsRun { return (runTemplate(), ownHeaders.fields) }
        let slot = Int(truncatingIfNeeded: UInt(bitPattern: ObjectIdentifier(ownHeaders)) >> 4) & (Self.ownSlots - 1)
        guard ownSeen[slot] === ownHeaders else {
            ownSeen[slot] = ownHeaders
            ownMade[slot] = nil
            return (authorizationOnly, ownHeaders.fields)
        }
        if let made = ownMade[slot] { return (made, []) }
        let made = H2RequestTemplate(pathPrefix: pathPrefix, headers: authorization + ownHeaders.fields)
        ownMade[slot] = made
        return (made, [])
    }
}

extension H2Header.IndexingRules {
    /// Apple's HPACK guidance for the requests a sender makes (`HPACKGuidance`).
    static let apple = H2Header.IndexingRules(neverIndexed: HPACKGuidance.neverIndexed,
                                              indexedOnFirstRequestOnly: HPACKGuidance.indexedOnFirstRequestOnly)
}
