extension Double {
    /// `Int64(self.rounded())` (the nearest integer, halves away from zero) without the call to libm's
    /// `round` that `rounded()` compiles to on baseline x86-64 (no SSE4.1 `roundsd`): the result
    /// line's latency and both latency histograms round once per row each. `self - Double(whole)` is
    /// exact (below 2^53 `whole` is within a factor of two of `self`, or zero; above, both are equal),
    /// so the comparison with 0.5 decides as `rounded()` does. Traps where `Int64(_:)` would.
    @inline(__always)
    var nearestInt64: Int64 {
        let whole = Int64(self)
        let fraction = self - Double(whole)
        if fraction >= 0.5 { return whole + 1 }
        if fraction <= -0.5 { return whole - 1 }
        return whole
    }
}
