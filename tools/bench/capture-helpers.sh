# Helpers of the benchmark scripts, sourced by them (exec_segment and aux_data, which make
# inputs from recordings for make-captures.sh and pt-latency.sh, need python3).

# The median of the numbers on stdin, one a line (an even count: the mean of the middle two).
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# $1 concatenated until it holds at least $2 bytes (one copy at least), into $3; the
# number of copies printed.
concat_to_size() {
	local size copies c
	size=$(stat -c %s "$1")
	copies=$((($2 + size - 1) / size))
	[ "$copies" -ge 1 ] || copies=1
	for ((c = 0; c < copies; c++)); do cat "$1"; done > "$3"
	echo "$copies"
}

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
