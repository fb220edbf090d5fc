#if canImport(Glibc)
import Glibc
#endif

/// The wall clock (CLOCK_REALTIME), for what APNs measures in it: provider tokens' `iat`,
/// `apns-expiration`, 410 timestamps. One reading for every module, without Foundation.
public enum WallClock {
    /// Seconds since 1970.
    public static func seconds() -> Int64 {
        Int64(time(nil))
    }

    /// Milliseconds since 1970.
    public static func milliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
