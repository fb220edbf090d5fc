import Foundation

/// How much slower than a plain debug build the code under test runs here: `make sanitize` sets
/// APNS_BULK_TEST_TIME_SCALE for its AddressSanitizer and ThreadSanitizer runs, where everything
/// takes several times as long. Time limits that check promptness (a signal ends a run within a
/// second) or guard against a hang are multiplied by it, so they keep measuring the build they
/// run on; without the variable the limits are the plain ones.
public enum TestTime {
    public static let scale: Double = {
        let value = ProcessInfo.processInfo.environment["APNS_BULK_TEST_TIME_SCALE"].flatMap(Double.init) ?? 1
        return value.isFinite ? max(1, value) : 1
    }()

    /// `seconds` in this build's time.
    public static func seconds(_ seconds: Double) -> Double { seconds * scale }

    /// The CPU time `body` took on this thread: what the code costs, whatever else the machine runs
    /// (wall time on a loaded machine also measures how long the thread waited for a core).
    public static func threadCPUSeconds(_ body: () -> Void) -> Double {
        func now() -> Double {
            var spec = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
            return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
        }
        let start = now()
        body()
        return now() - start
    }
}
