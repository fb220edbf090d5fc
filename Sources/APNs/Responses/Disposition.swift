/// What a sender must do with a notification after APNs answered it (docs/apns.md's response table).
public enum Disposition: Sendable, Hashable {
    /// 200: APNs took it.
    case delivered
    /// 410 Unregistered/ExpiredToken: the token is dead; report it, never retry.
    case deadToken
    /// 400 BadDeviceToken/DeviceTokenNotForTopic: the token is wrong for this topic or
    /// environment; report it, never retry.
    case badToken
    /// The request itself is wrong; never retry it as is.
    case permanent
    /// Try again later; `RetryScope` says what to back off.
    case retryLater(RetryScope)
    /// 403 ExpiredProviderToken: regenerate the shared provider token, then retry.
    case refreshToken
    /// The credentials are refused: the whole run is affected, stop sending.
    case credentialsRefused

    /// The disposition of an answer: a 200 is delivered whatever else it says; a known reason
    /// decides by docs/apns.md's table (even when the status disagrees, the reason is the more
    /// specific word); otherwise the status decides:
    /// - 410 → `deadToken`;
    /// - 403 → `credentialsRefused`: every documented 403 but ExpiredProviderToken refuses the
    ///   credentials, and stopping is cheaper than burning the list on a refusal we cannot read;
    /// - 429 → `retryLater(.perDeviceToken)`, the common 429;
    /// - 5xx → `retryLater(.connection)`;
    /// - anything else (other 4xx, 1xx, 3xx, nonsense) → `permanent`: retrying an answer we do
    ///   not understand would repeat it.
    public init(status: Int, reason: Reason?) {
        if status == 200 {
            self = .delivered
        } else if let reason {
            self = reason.disposition
        } else {
            switch status {
            case 410: self = .deadToken
            case 403: self = .credentialsRefused
            case 429: self = .retryLater(.perDeviceToken)
            case 500...599: self = .retryLater(.connection)
            default: self = .permanent
            }
        }
    }
}

/// What a `retryLater` must back off.
public enum RetryScope: Sendable, Hashable {
    /// 429 TooManyRequests: this device token gets too many; retry it later, with backoff.
    /// Other tokens go on as usual.
    case perDeviceToken
    /// 500/503: the server is in trouble; retry with backoff, preferably on another
    /// connection (503 Shutdown: this one is closing).
    case connection
    /// 429 TooManyProviderTokenUpdates: the provider token changed too often; keep the current
    /// token (do not regenerate it) and retry later.
    case keepProviderToken
}
