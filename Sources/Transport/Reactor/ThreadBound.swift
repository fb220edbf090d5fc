/// Carries a value that is not `Sendable` from the thread that made it to the one thread that uses
/// it, through threads that only move it: a completion closure that captures reactor-owned objects,
/// a server's core on its way to its reactor, a file writer opened by the caller for a reactor.
///
/// The compiler cannot check that promise, so every use states it: whoever opens `value` is the
/// one thread that owns it, and the threads in between never touch it.
public struct ThreadBound<Value>: @unchecked Sendable {
    /// The carried value; read it only on the thread that owns it.
    public let value: Value

    /// Wraps `value` for the trip to the thread that owns it.
    public init(_ value: Value) {
        self.value = value
    }
}
