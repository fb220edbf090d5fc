/// The Transport module; see docs/ARCHITECTURE.md for its boundaries.
public enum TransportModule {
    /// The module's name, for messages and tests that check what was linked.
    public static let name = "Transport"
}
