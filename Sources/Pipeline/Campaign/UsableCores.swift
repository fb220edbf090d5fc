import Foundation

/// Cores this process may run on: its affinity mask (taskset, a container's cpuset), which
/// `activeProcessorCount` ignores. More threads than usable cores only add context switches
/// (benchmarks/RESULTS.md): `send`'s default reactor threads and the prescan's halves ask this.
/// Falls back to the online processor count.
public enum UsableCores {
    public static func count() -> Int {
        let online = max(1, ProcessInfo.processInfo.activeProcessorCount)
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") })
        else { return online }
        let mask = line.dropFirst("Cpus_allowed:".count)
        let allowed = mask.reduce(0) { count, character in count + (character.hexDigitValue ?? 0).nonzeroBitCount }
        return allowed > 0 ? min(allowed, online) : online
    }
}
