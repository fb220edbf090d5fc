/// The MockAPNs module; see DESIGN.md for its boundaries.
public enum MockAPNsModule {
    public static let name = "MockAPNs"
}
