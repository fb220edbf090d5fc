/// The rapid-reset guard (CVE-2023-44487) of a server session, counting only resets that cancel
/// work: a token bucket of `burst` tokens refilled at `rate` per second, one taken by each
/// RST_STREAM for a stream still open; with none left the session ends the connection (GOAWAY).
///
/// nghttp2's own guard (same defaults: 1000, 33/s) also counts RST_STREAM for streams that had
/// already ended, which cost the server nothing: async-http-client (so APNSwift) cancels each
/// stream after its response, and a connection of such a client was dropped after about a
/// thousand requests, which APNs does not do. nghttp2's guard is switched off for this one.
struct H2ResetRateLimit {
    let burst: UInt64
    let rate: UInt64
    private var tokens: UInt64
    private var refilledAtSeconds: UInt64

    init(burst: UInt64 = 1000, rate: UInt64 = 33, nowSeconds: UInt64) {
        self.burst = burst
        self.rate = rate
        tokens = burst
        refilledAtSeconds = nowSeconds
    }

    /// Takes a token for one reset of an open stream; false when none is left (end the connection).
    mutating func take(nowSeconds: UInt64) -> Bool {
        if nowSeconds > refilledAtSeconds {
            let elapsed = nowSeconds - refilledAtSeconds
            let gain = elapsed > burst / max(rate, 1) ? burst : elapsed * rate
            tokens = min(burst, tokens + gain)
            refilledAtSeconds = nowSeconds
        }
        guard tokens > 0 else { return false }
        tokens -= 1
        return true
    }
}
