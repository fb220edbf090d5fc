import Glibc
import Transport

/// What a connection's last request of the broadcast side that passed its checks carried: the next
/// one carrying the same values passes those checks again without a `String` or a hash (their
/// verdicts depend on nothing else: the configuration does not change), as `acceptedTopic` does for
/// device pushes. One per connection, in `MockConnectionAuth`.
struct MockAcceptedBroadcast: Sendable {
    /// The path's bundle id, accepted under `key`: no push type's suffix, served, broadcasts enabled.
    struct App: Sendable {
        var bytes: [UInt8]
        var text: String
        var key: Int?
    }

    /// A broadcast's `apns-push-type`, `apns-priority` and `apns-expiration` as they came (nil when
    /// absent), accepted.
    struct Headers: Sendable {
        var pushType: [UInt8]?
        var priority: [UInt8]?
        var expiration: [UInt8]?
    }

    var app: App?
    var headers: Headers?
    /// The last path's route: a connection's broadcasts repeat one path, the session's same `String`.
    private var lastRoute: (path: String, route: MockBroadcastRoute)?

    /// `MockBroadcastRoute(path:)`, kept for the next request of the same path (a `String`
    /// comparison, at once when it is the same `String`).
    mutating func route(of path: String) -> MockBroadcastRoute {
        if let lastRoute, lastRoute.path == path { return lastRoute.route }
        let route = MockBroadcastRoute(path: path)
        lastRoute = (path, route)
        return route
    }

    /// Whether `bundleID` under `key` is the accepted app.
    func accepts(_ bundleID: Substring, key: Int?) -> Bool {
        guard let app, app.key == key else { return false }
        var bundleID = bundleID
        // `withUTF8`: a substring's `utf8.withContiguousStorageIfAvailable` is the generic slice's.
        return bundleID.withUTF8 { bytes in
            bytes.count == app.bytes.count && app.bytes.withUnsafeBufferPointer { kept in
                bytes.isEmpty || memcmp(kept.baseAddress!, bytes.baseAddress!, bytes.count) == 0
            }
        }
    }

    /// The accepted headers are the request's (`pushType`, `priority`, `expiration`: field indices).
    func acceptsHeaders(pushType: Int?, priority: Int?, expiration: Int?, in fields: H2RequestHeaders) -> Bool {
        guard let headers else { return false }
        return Self.same(headers.pushType, pushType, fields) && Self.same(headers.priority, priority, fields)
            && Self.same(headers.expiration, expiration, fields)
    }

    private static func same(_ kept: [UInt8]?, _ index: Int?, _ fields: H2RequestHeaders) -> Bool {
        switch (kept, index) {
        case (nil, nil): true
        case (let kept?, let index?): fields.value(at: index, equals: kept)
        default: false
        }
    }
}
