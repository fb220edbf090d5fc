/// The APNs module; see DESIGN.md for its boundaries.
public enum APNsModule {
    public static let name = "APNs"
}
