/// Carries a value to the one thread that will own it from then on.
final class SendableBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
