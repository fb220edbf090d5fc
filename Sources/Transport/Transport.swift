/// The Transport module; see DESIGN.md for its boundaries.
public enum TransportModule {
    public static let name = "Transport"
}
