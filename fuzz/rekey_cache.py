#!/usr/bin/env python3
# Rewrites a heaptui cache file for the key b"fuzz" (the fuzz target's key).
import struct, sys
b = open(sys.argv[1], 'rb').read()
assert b[:8] == b'HEAPTUIC'
ver, klen = struct.unpack_from('<II', b, 8)
old_hdr = (16 + klen + 7) // 8 * 8
key = b'fuzz'
new_hdr = (16 + len(key) + 7) // 8 * 8
delta = old_hdr - new_hdr
table_off, count, magic = struct.unpack_from('<QI4s', b, len(b) - 16)
entries = []
for i in range(count):
    tag, width, off, ln, crc, pad = struct.unpack_from('<IIQQII', b, table_off + 32 * i)
    entries.append(struct.pack('<IIQQII', tag, width, off - delta, ln, crc, pad))
head = b'HEAPTUIC' + struct.pack('<II', ver, len(key)) + key
head += b'\0' * (new_hdr - len(head))
body = b[old_hdr:table_off]
out = head + body + b''.join(entries) + struct.pack('<QI4s', table_off - delta, count, magic)
open(sys.argv[2], 'wb').write(out)
