/// The Pipeline module; see DESIGN.md for its boundaries.
public enum PipelineModule {
    public static let name = "Pipeline"
}
