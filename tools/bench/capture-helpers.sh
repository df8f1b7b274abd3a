# Helpers of the scripts that make benchmark inputs from recordings (make-captures.sh,
# pt-latency.sh), sourced by them; they need python3.

# The executable PT_LOAD segment of a static ELF file: its bytes to $2, its address printed.
exec_segment() {
	python3 - "$1" "$2" <<'EOF'
import struct, sys
elf = open(sys.argv[1], "rb").read()
phoff, = struct.unpack_from("<Q", elf, 0x20)
phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
for i in range(phnum):
    p_type, p_flags, p_offset, p_vaddr, _, p_filesz, _, _ = \
        struct.unpack_from("<IIQQQQQQ", elf, phoff + i * phentsize)
    if p_type == 1 and p_flags & 1:
        open(sys.argv[2], "wb").write(elf[p_offset:p_offset + p_filesz])
        print(hex(p_vaddr))
        break
EOF
}

# The AUX data (the Intel PT stream) of the only traced thread of a perf.data, to stdout.
aux_data() {
	python3 - "$1" <<'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
off, size = struct.unpack_from("<QQ", data, 40)
pos, end, streams = off, off + size, {}
while pos < end:
    rtype, _, rsize = struct.unpack_from("<IHH", data, pos)
    if rsize == 0:
        break
    if rtype == 71:  # PERF_RECORD_AUXTRACE: the AUX bytes follow the record
        aux_size, _, _, idx = struct.unpack_from("<QQQI", data, pos + 8)
        streams.setdefault(idx, []).append(data[pos + rsize:pos + rsize + aux_size])
        pos += aux_size
    pos += rsize
if len(streams) != 1:
    sys.exit("make-captures: %d AUX streams in %s, one expected" % (len(streams), sys.argv[1]))
sys.stdout.buffer.write(b"".join(next(iter(streams.values()))))
EOF
}
