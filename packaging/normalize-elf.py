#!/usr/bin/env python3
"""Makes a Swift binary a function of its sources alone: `normalize-elf.py BINARY` (in place).

swiftc stamps every object with a 16-byte module hash (the `.swift_modhash` section) that is new
on each compilation, even of the same file in the same directory, and the linker's build ID is a
hash over the file, that section included. Nothing reads the section at run time (it is private to
the compiler's own incremental code generation), so it is zeroed where it lies (no address moves),
and the build ID becomes the SHA-1 of the file with that section and the ID itself zeroed: the same
sources, toolchain and libraries give the same bytes, and the ID still tells builds apart.
"""
import hashlib
import struct
import sys


def sections(data):
    """(name, offset, size) of each section of a 64-bit little-endian ELF file."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        sys.exit(f"normalize-elf: {sys.argv[1]} is not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]
    for name_offset, kind, _, _, offset, size, *_ in headers:
        end = data.index(b"\0", names_at + name_offset)
        yield data[names_at + name_offset:end].decode(), kind, offset, size


def main():
    path = sys.argv[1]
    data = bytearray(open(path, "rb").read())
    build_id = None
    for name, kind, offset, size in sections(data):
        if name == ".swift_modhash" and kind != 8:  # not NOBITS
            data[offset:offset + size] = bytes(size)
        elif name == ".note.gnu.build-id":
            namesz, descsz, _ = struct.unpack_from("<III", data, offset)
            start = offset + 12 + (namesz + 3) // 4 * 4
            build_id = (start, descsz)
    if build_id:
        start, length = build_id
        data[start:start + length] = bytes(length)
        digest = hashlib.sha1(data).digest()
        data[start:start + length] = (digest * (length // len(digest) + 1))[:length]
    open(path, "wb").write(data)


if __name__ == "__main__":
    main()
