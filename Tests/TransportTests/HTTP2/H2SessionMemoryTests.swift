import CNGHTTP2
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Transport

/// nghttp2's allocator for a client session, driven through the `nghttp2_mem` it hands out.
@Suite struct H2SessionMemoryTests {
    @Test func blocksAreAlignedDistinctAndKeepTheirBytes() throws {
        let memory = H2SessionMemory()
        let mem = memory.nghttp2Memory
        var blocks: [(UnsafeMutableRawPointer, Int)] = []
        for (index, size) in [0, 1, 15, 16, 17, 100, 1023, 1024, 1025, 5000, 70_000].enumerated() {
            for copy in 0..<40 {
                let block = try #require(mem.malloc(size, mem.mem_user_data))
                #expect(Int(bitPattern: block) % 16 == 0, "malloc's alignment")
                #expect(H2SessionMemory.capacity(of: block) >= size)
                memset(block, Int32(truncatingIfNeeded: index &* 40 &+ copy), size)
                blocks.append((block, size))
            }
        }
        #expect(Set(blocks.map { Int(bitPattern: $0.0) }).count == blocks.count, "no block handed out twice")
        for (offset, (block, size)) in blocks.enumerated() {
            let byte = UInt8(truncatingIfNeeded: offset)
            #expect(UnsafeRawBufferPointer(start: block, count: size).allSatisfy { $0 == byte })
            mem.free(block, mem.mem_user_data)
        }
        mem.free(nil, mem.mem_user_data)
    }

    @Test func freedBlocksAreReusedAndReallocKeepsTheContent() throws {
        let memory = H2SessionMemory()
        let mem = memory.nghttp2Memory
        let first = try #require(mem.malloc(40, mem.mem_user_data))
        mem.free(first, mem.mem_user_data)
        let again = try #require(mem.malloc(48, mem.mem_user_data))
        #expect(again == first, "the same size class hands back the block just freed")

        for (from, to) in [(40, 44), (40, 300), (300, 2000), (2000, 100_000), (100_000, 10)] {
            let block = try #require(mem.malloc(from, mem.mem_user_data))
            for index in 0..<from { block.storeBytes(of: UInt8(truncatingIfNeeded: index), toByteOffset: index, as: UInt8.self) }
            let moved = try #require(mem.realloc(block, to, mem.mem_user_data))
            let kept = min(from, to)
            #expect((0..<kept).allSatisfy { moved.load(fromByteOffset: $0, as: UInt8.self) == UInt8(truncatingIfNeeded: $0) })
            #expect(H2SessionMemory.capacity(of: moved) >= to)
            mem.free(moved, mem.mem_user_data)
        }
        mem.free(again, mem.mem_user_data)
    }

    @Test func callocZeroesAndRefusesAnOverflowingSize() throws {
        let memory = H2SessionMemory()
        let mem = memory.nghttp2Memory
        let dirty = try #require(mem.malloc(64, mem.mem_user_data))
        memset(dirty, 0xAB, 64)
        mem.free(dirty, mem.mem_user_data)
        let zeroed = try #require(mem.calloc(8, 8, mem.mem_user_data))
        #expect(UnsafeRawBufferPointer(start: zeroed, count: 64).allSatisfy { $0 == 0 })
        mem.free(zeroed, mem.mem_user_data)
        #expect(mem.calloc(Int.max / 2, 4, mem.mem_user_data) == nil)
    }
}
