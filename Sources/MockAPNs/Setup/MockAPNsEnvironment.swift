/// Which of Apple's two environments the mock plays (`mock-server --environment`). Today the
/// difference is one header: the Development (sandbox) environment sends `apns-unique-id` on its
/// answers, the key to the Push Notifications Console's delivery log; production sends none.
public enum MockAPNsEnvironment: String, Sendable, CaseIterable {
    case production
    case sandbox

    /// Answers carry a fresh `apns-unique-id`.
    public var sendsUniqueIDs: Bool { self == .sandbox }
}
