import ByteScan
#if canImport(Glibc)
import Glibc
#endif

/// `sent-rows` in `--out`: the rows this run has handed to a connection, one bit per row of the
/// campaign (by its number, so a shard's file has the campaign's layout), in a file mapped
/// MAP_SHARED. A reactor thread sets a row's bit as it submits the row's request, before the
/// request's bytes can reach the socket (`mark`); the bits are in the page cache the moment they
/// are set, so a kill -9 loses none of them, and `--resume` knows exactly which rows the crash
/// lost: those sent and without a record in the log (`CrashLoss`). One atomic OR a row.
///
/// The header names the run that wrote the file (campaign.json's `runs`): a resume counts the
/// crashed run's bits once, then starts the file afresh for itself. The reader thread grows the
/// file ahead of the rows it hands on (`cover`, with its blocks allocated, so that a full disk is
/// an error there and never a SIGBUS at a reactor's store); the mapping is reserved whole up front,
/// so it never moves under the reactor threads. Not synced to disk: a power cut may lose the last
/// bits, as it may the log's last frame.
///
/// Shared by the reader (`cover`, which alone grows the file) and the reactor threads (`mark`,
/// atomic stores into the mapping); every other property is set in `init` and only read.
final class SentRows: @unchecked Sendable {
    static let fileName = "sent-rows"
    private let path: String
    private let descriptor: Int32
    private let mapping: UnsafeMutableRawPointer
    private let reservedBytes: Int
    /// The bitmap's words: row r is bit r % 64 of word r / 64 (bit 0, row 0, is never set).
    let words: UnsafeMutablePointer<UInt64>
    /// The file's size: rows below `(coveredBytes - header) * 8` may be marked. Reader thread only.
    private var coveredBytes: Int

    /// Rows the file grows by when the reader outruns it (4 MiB of bitmap).
    private static let growthRows = 1 << 25

    /// Starts the file for run `run` with no row marked, covering `rows` (the prescan's count) or,
    /// without a count, a first share that `cover` grows.
    init(directory: String, run: Int, rows: Int?) throws(CampaignDirectoryError) {
        path = directory + "/" + Self.fileName
        descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, OutputFile.mode)
        guard descriptor >= 0 else { throw .output(path: path, detail: String(cString: strerror(errno))) }
        var header = RowBitmapFile.header(run: run)
        guard pwrite(descriptor, &header, header.count, 0) == header.count else {
            let detail = String(cString: strerror(errno))
            _ = close(descriptor)
            throw .output(path: path, detail: detail)
        }
        // Address space only (MAP_NORESERVE, nothing touched): 1 GiB covers 8.5 billion rows. Where
        // the address space is limited, what the prescan counted, and a stream then stops at that.
        var reserved = 1 << 30
        var base = mmap(nil, reserved, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, descriptor, 0)
        if base == MAP_FAILED, let rows {
            reserved = Self.bytes(coveringRow: rows + Self.growthRows)
            base = mmap(nil, reserved, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, descriptor, 0)
        }
        guard let base, base != MAP_FAILED else {
            let detail = String(cString: strerror(errno))
            _ = close(descriptor)
            throw .output(path: path, detail: "cannot map it: \(detail)")
        }
        mapping = base
        reservedBytes = reserved
        words = (base + RowBitmapFile.headerBytes).bindMemory(to: UInt64.self, capacity: (reserved - RowBitmapFile.headerBytes) / 8)
        coveredBytes = header.count
        guard grow(coveringRow: rows ?? Self.growthRows) else {
            throw .output(path: path, detail: "cannot make room for the bitmap: \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        _ = munmap(mapping, reservedBytes)
        _ = close(descriptor)
    }

    /// Marks `row` sent. Any reactor thread, for a row the reader has covered.
    @inline(__always)
    func mark(_ row: Int) {
        AtomicBits(words: words).set(UInt64(truncatingIfNeeded: row))
    }

    /// Unmarks `row`: answered, but held back without a record (a BadDeviceToken before its group's
    /// environment is proven). APNs delivered nothing for it, so a crash's resend of it duplicates
    /// nothing: it is no row a crash lost (not counted, not withheld by `--no-resend-lost`).
    @inline(__always)
    func unmark(_ row: Int) {
        AtomicBits(words: words).clear(UInt64(truncatingIfNeeded: row))
    }

    /// Called by the reader with a batch's last row number before the batch's rows are handed on:
    /// false when the file cannot grow to cover it (a full disk): the run must stop, the rows unsent.
    @inline(__always)
    func cover(_ row: Int) -> Bool {
        row < (coveredBytes - RowBitmapFile.headerBytes) << 3 || grow(coveringRow: row + Self.growthRows)
    }

    private func grow(coveringRow row: Int) -> Bool {
        let wanted = Swift.min(Self.bytes(coveringRow: row), reservedBytes)
        guard wanted > coveredBytes else { return row < (coveredBytes - RowBitmapFile.headerBytes) << 3 }
        // Blocks allocated now, not at a reactor's first store into the page.
        let failure = posix_fallocate(descriptor, off_t(coveredBytes), off_t(wanted - coveredBytes))
        if failure != 0 {
            errno = failure
            return false
        }
        coveredBytes = wanted
        return true
    }

    /// The file's size with row `row` in it, in whole pages.
    private static func bytes(coveringRow row: Int) -> Int {
        let bytes = RowBitmapFile.headerBytes + (row >> 6 + 1) * 8
        return (bytes + 4095) & ~4095
    }
}

/// The files that hold a set of rows as a bitmap (`sent-rows`, `withheld-rows`): a 64-byte header
/// (a name line, and at its end the run that wrote it, little-endian) and then the `DoneRows`
/// layout, words of 64 rows, little-endian. A file shorter than its rows (a crash while it was
/// grown) reads as those rows unmarked: a row is marked only once the file covers it.
enum RowBitmapFile {
    static let headerBytes = 64
    private static let name = Array("apns-bulk row bitmap 1\n".utf8)

    static func header(run: Int) -> [UInt8] {
        var bytes = name + [UInt8](repeating: 0, count: headerBytes - name.count)
        withUnsafeBytes(of: UInt64(run).littleEndian) { bytes.replaceSubrange(headerBytes - 8..<headerBytes, with: $0) }
        return bytes
    }

    /// The rows in the file at `path` and the run that wrote it; nil when there is no such file or
    /// it is not one of these.
    static func read(path: String) -> (run: Int, rows: DoneRows)? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { _ = close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, Int(info.st_size) >= headerBytes else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            offset += count
        }
        guard offset >= headerBytes, Array(bytes[0..<name.count]) == name else { return nil }
        var run: UInt64 = 0
        withUnsafeMutableBytes(of: &run) { $0.copyBytes(from: bytes[headerBytes - 8..<headerBytes]) }
        let count = (offset - headerBytes) / 8
        var words = [UInt64](repeating: 0, count: count)
        words.withUnsafeMutableBytes { $0.copyBytes(from: bytes[headerBytes..<headerBytes + count * 8]) }
        return (Int(UInt64(littleEndian: run)), DoneRows(words: words.map { UInt64(littleEndian: $0) }))
    }

    /// Writes `rows` to `path` (atomically: a crash leaves the old file or the new one).
    static func write(_ rows: DoneRows, run: Int, to path: String) throws(OutputFileError) {
        var bytes = header(run: run)
        for word in rows.words { withUnsafeBytes(of: word.littleEndian) { bytes.append(contentsOf: $0) } }
        try OutputFile.write(bytes, to: path, atomically: true)
    }
}
