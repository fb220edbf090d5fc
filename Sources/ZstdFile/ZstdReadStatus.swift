/// What one `read` call found.
public enum ZstdReadStatus: Equatable, Sendable {
    /// Bytes were appended; the current frame continues.
    case more
    /// The current frame ended with this call (callers that commit whole frames commit now).
    case frameEnd
    /// Clean end of the file: every frame complete.
    case end
}
