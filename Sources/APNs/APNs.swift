/// The APNs module; see docs/ARCHITECTURE.md for its boundaries.
public enum APNsModule {
    /// The module's name, for messages and tests that check what was linked.
    public static let name = "APNs"
}
