import APNs
#if canImport(Glibc)
import Glibc
#endif

/// What identifies a campaign's input file for `--resume`: its size and a SHA-256 of samples of
/// its bytes as stored (compressed or not): the whole file up to 4 MiB, beyond that its first and
/// last MiB and 64 evenly spaced 4 KiB blocks between them. Reading ~2.3 MB costs milliseconds
/// at any size, where hashing a 10-million-row file (over 1 GB) would cost seconds of CPU at
/// every start. A zstd file's last MiB holds its content checksum, so a recompressed or edited
/// `.csv.zst` changes it; a plain CSV edited in place to the same size between the samples would
/// pass, which is why the size, the ends and the spread are all in it.
public struct InputFingerprint: Equatable, Sendable, Codable {
    /// The file's size in bytes, as stored.
    public let size: Int64
    /// The SHA-256 of the sampled bytes, lowercase hex.
    public let sampleSHA256: String

    enum CodingKeys: String, CodingKey {
        case size
        case sampleSHA256 = "sample_sha256"
    }

    static let wholeFileLimit: Int64 = 4 << 20
    static let endBytes = 1 << 20
    static let blockBytes = 4096
    static let blocks = 64

    /// A fingerprint as campaign.json records it.
    public init(size: Int64, sampleSHA256: String) {
        self.size = size
        self.sampleSHA256 = sampleSHA256
    }

    /// The file's fingerprint; `notRegular` for a pipe, a device or stdin (they cannot be read
    /// twice, so a campaign from one cannot be resumed).
    public static func of(path: String) throws(CampaignDirectoryError) -> InputFingerprint {
        // stat before open: opening a FIFO with no writer would block.
        var info = stat()
        guard path != "-" else { throw .inputNotRegular(path: path) }
        guard stat(path, &info) == 0 else { throw .inputUnreadable(path: path, detail: String(cString: strerror(errno))) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw .inputNotRegular(path: path) }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw .inputUnreadable(path: path, detail: String(cString: strerror(errno))) }
        defer { _ = close(descriptor) }
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw .inputNotRegular(path: path)
        }
        let size = Int64(info.st_size)
        var ranges: [(offset: Int64, count: Int)] = []
        if size <= wholeFileLimit {
            ranges.append((0, Int(size)))
        } else {
            ranges.append((0, endBytes))
            let middle = size - 2 * Int64(endBytes)
            for index in 0..<blocks {
                ranges.append((Int64(endBytes) + middle * Int64(index) / Int64(blocks), blockBytes))
            }
            ranges.append((size - Int64(endBytes), endBytes))
        }
        guard let digest = SHA256() else { throw .inputUnreadable(path: path, detail: "out of memory") }
        var buffer = [UInt8](repeating: 0, count: endBytes)
        for range in ranges {
            var done = 0
            while done < range.count {
                // A whole small file is up to 4 MiB: read it in buffer-sized pieces.
                let want = min(range.count - done, buffer.count)
                let got = buffer.withUnsafeMutableBytes {
                    pread(descriptor, $0.baseAddress, want, off_t(range.offset) + off_t(done))
                }
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else {
                    throw .inputUnreadable(path: path, detail: got == 0 ? "the file shrank while being read" : String(cString: strerror(errno)))
                }
                buffer.withUnsafeBytes { digest.update(UnsafeRawBufferPointer(rebasing: $0[0..<got])) }
                done += got
            }
        }
        let hex = digest.finish().map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
        return InputFingerprint(size: size, sampleSHA256: hex)
    }
}
