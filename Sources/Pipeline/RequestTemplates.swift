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
    private let runHeaders: RowHeaders?

    /// `token` is added to `sentTokens`, the worker's list of every token its requests carried.
    init(token: ProviderToken?, runHeaders: RowHeaders?, sentTokens: inout [ProviderToken]) {
        self.runHeaders = runHeaders
        jwt = token?.jwt
        if let token {
            sentTokens.append(token)
            sentIndex = UInt32(truncatingIfNeeded: sentTokens.count - 1)
        } else {
            sentIndex = nil
        }
        authorization = token.map { [H2Header("authorization", "bearer " + $0.jwt)] } ?? []
        authorizationOnly = H2RequestTemplate(pathPrefix: "/3/device/", headers: authorization)
    }

    /// The template for a job with these headers of its own, or with the run's (nil).
    func template(for ownHeaders: RowHeaders?) -> H2RequestTemplate {
        guard ownHeaders == nil else { return authorizationOnly }
        if let runDefault { return runDefault }
        let made = H2RequestTemplate(pathPrefix: "/3/device/", headers: authorization + (runHeaders?.fields ?? []))
        runDefault = made
        return made
    }
}
