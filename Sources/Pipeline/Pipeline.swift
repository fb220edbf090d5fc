/// The Pipeline module; see docs/ARCHITECTURE.md for its boundaries.
public enum PipelineModule {
    /// The module's name, for messages and tests that check what was linked.
    public static let name = "Pipeline"
}
