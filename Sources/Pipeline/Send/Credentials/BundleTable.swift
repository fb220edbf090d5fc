#if canImport(Glibc)
import Glibc
#endif
import APNs

/// The key router's lookup from a bundle id to its topic-specific credential per environment,
/// read per row with the topic's bytes: an open-addressing table with an FNV-1a hash, so a row
/// pays neither a String nor SipHash (a `[String: Int]` cost ~1,400 instructions a row in the
/// ten-key benchmark). Built once; immutable after.
struct BundleTable: Sendable {
    private var keys: [[UInt8]] = []
    /// Per key: the credential index in production and in sandbox (-1: none).
    private var values: [(production: Int, sandbox: Int)] = []
    /// Index into `keys` + 1 per bucket; 0 is empty. A power of two, at least twice the keys.
    private var buckets: [Int32]
    private let mask: Int

    /// `entries`: (bundle id, environment, credential index); the first entry of a (bundle id,
    /// environment) pair wins, as the router's rule "among equal candidates the first given" says.
    init(_ entries: [(bundleID: String, environment: APNsEnvironment, index: Int)]) {
        var size = 16
        while size < entries.count * 2 { size *= 2 }
        buckets = Array(repeating: 0, count: size)
        mask = size - 1
        for entry in entries {
            let bytes = Array(entry.bundleID.utf8)
            let slot = bytes.withUnsafeBufferPointer { find($0) }
            if buckets[slot] == 0 {
                keys.append(bytes)
                values.append((-1, -1))
                buckets[slot] = Int32(keys.count)
            }
            let key = Int(buckets[slot]) - 1
            switch entry.environment {
            case .production: if values[key].production < 0 { values[key].production = entry.index }
            case .sandbox: if values[key].sandbox < 0 { values[key].sandbox = entry.index }
            }
        }
    }

    /// The credential index for `bundleID` in `environment`, if a topic-specific one serves it.
    func index(of bundleID: UnsafeBufferPointer<UInt8>, in environment: APNsEnvironment) -> Int? {
        let key = Int(buckets[find(bundleID)]) - 1
        guard key >= 0 else { return nil }
        let index = environment == .production ? values[key].production : values[key].sandbox
        return index < 0 ? nil : index
    }

    var isEmpty: Bool { keys.isEmpty }

    /// The bucket holding `bytes`, or the empty one where they would go.
    private func find(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        // An empty name never matches: no row is routed by an empty topic.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        var slot = Int(truncatingIfNeeded: hash ^ (hash >> 29)) & mask
        while buckets[slot] != 0 {
            let stored = keys[Int(buckets[slot]) - 1]
            if stored.count == bytes.count, bytes.count > 0, let wanted = bytes.baseAddress,
               stored.withUnsafeBufferPointer({ memcmp($0.baseAddress!, wanted, bytes.count) == 0 }) {
                return slot
            }
            slot = (slot + 1) & mask
        }
        return slot
    }
}
