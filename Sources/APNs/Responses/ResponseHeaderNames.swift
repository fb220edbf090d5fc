/// The response headers of APNs a sender keeps from each answer (the HTTP/2 client captures the
/// headers its caller names, `H2CapturedHeaders`).
public enum ResponseHeaderNames {
    /// The notification's id: the request's own `apns-id`, or the one APNs made for it.
    public static let apnsID = "apns-id"
    /// A UUID that APNs' sandbox adds, the key to the Push Notifications Console's delivery log.
    public static let uniqueID = "apns-unique-id"
}
