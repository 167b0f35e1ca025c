# efipt decode and efipt insn --run on run directories: a good one, and
# hostile ones (no PSB, a cut trace, a failed trace write, overlapping
# snapshots, terminal escapes in image names, FIFOs).
. tests/lib.sh
. tests/cli/lib_rundir.sh
# copy the good directory to NAME
copy() { rm -rf "$TMP/$1"; cp -r "$D" "$TMP/$1"; }

expect_rc "decode: good run directory" 0 $EFIPT decode "$D"
contains "decode: summary names the image" "$TMP/out" "loop.efi"
expect_rc "insn --run: good run directory" 0 $EFIPT insn --run "$D" --no-inst

# write errors: exit 2 naming the cause, never a silent truncation
for cmd in "decode $D" "insn --run $D" "insn --run $D --no-inst" "insn --run $D --stat"; do
	$EFIPT $cmd >/dev/full 2>"$TMP/err"
	rc=$?
	if [ "$rc" -eq 2 ] && grep -q "write error on standard output: No space left on device" "$TMP/err"; then
		ok "$cmd >/dev/full: exit 2, cause named"
	else
		nok "$cmd >/dev/full: exit 2, cause named" "exit $rc: $(cat "$TMP/err")"
	fi
done

# a trace without any PSB: nothing was decoded, and that is said
copy nopsb
head -c 3000 /dev/zero | tr '\0' '\125' >"$TMP/nopsb/trace.pt"
manifest "$TMP/nopsb"
expect_rc "decode: no PSB is an error" 1 $EFIPT decode "$TMP/nopsb"
contains "decode: no PSB named" "$TMP/err" "trace.pt: no PSB found"
expect_rc "insn: no PSB is an error" 1 $EFIPT insn --run "$TMP/nopsb" --no-inst
contains "insn: no PSB named" "$TMP/err" "trace.pt: no PSB found"
expect_rc "packets: no PSB is an error (the same status)" 1 $EFIPT packets "$TMP/nopsb/trace.pt"

# a trace cut inside its last packet (a TIP with IPC 2: 0x4d and 2 of its 4 IP bytes)
copy cut
printf '\115\001\002' >>"$TMP/cut/trace.pt"
manifest "$TMP/cut"
off=$(printf '0x%x' $(($(stat -c %s "$TMP/cut/trace.pt") - 3)))
expect_rc "decode: cut trace is an error" 1 $EFIPT decode "$TMP/cut"
contains "decode: cut packet and offset named" "$TMP/err" "the trace ends inside a packet at offset $off (3 bytes cut off)"
expect_rc "insn: cut trace is an error" 1 $EFIPT insn --run "$TMP/cut" --no-inst
contains "insn: cut packet and offset named" "$TMP/err" "the trace ends inside a packet at offset $off"
expect_rc "insn --stat: cut trace counted" 1 $EFIPT insn --run "$TMP/cut" --stat
contains "insn --stat: the error counted" "$TMP/out" "errors: 1"
expect_rc "packets: cut trace is an error (the same status)" 1 $EFIPT packets "$TMP/cut/trace.pt"

# insn --pt: - reads standard input, the same as the file
expect_rc "insn --pt FILE" 0 $EFIPT insn --pt "$D/trace.pt" --raw "$D/mem-0000000000001000.bin:0x1000" --no-inst
mv "$TMP/out" "$TMP/file.out"
$EFIPT insn --pt - --raw "$D/mem-0000000000001000.bin:0x1000" --no-inst <"$D/trace.pt" >"$TMP/stdin.out" 2>"$TMP/err"
rc=$?
if [ "$rc" -eq 0 ] && cmp -s "$TMP/file.out" "$TMP/stdin.out" && [ -s "$TMP/stdin.out" ]; then ok "insn --pt - (a file)"; else nok "insn --pt - (a file)" "exit $rc"; fi
cat "$D/trace.pt" | $EFIPT insn --pt - --raw "$D/mem-0000000000001000.bin:0x1000" --no-inst >"$TMP/pipe.out" 2>"$TMP/err"
rc=$?
if [ "$rc" -eq 0 ] && cmp -s "$TMP/file.out" "$TMP/pipe.out"; then ok "insn --pt - (a pipe)"; else nok "insn --pt - (a pipe)" "exit $rc: $(cat "$TMP/err")"; fi
expect_rc "insn --pt DIR named" 2 $EFIPT insn --pt "$TMP" --raw "$D/mem-0000000000001000.bin:0x1000"
contains "insn --pt DIR: a directory" "$TMP/err" "a directory, not a regular file"

# trace.pt that the run could not write, or that is missing
copy full
rm "$TMP/full/trace.pt"
manifest "$TMP/full" EFI_VOLUME_FULL
expect_rc "decode: failed trace write" 1 $EFIPT decode "$TMP/full"
contains "decode: failed trace write named" "$TMP/err" "the run could not write its trace: manifest.json says EFI_VOLUME_FULL for trace.pt"
expect_rc "insn --run: failed trace write" 2 $EFIPT insn --run "$TMP/full" --no-inst
contains "insn --run: failed trace write named" "$TMP/err" "the run could not write its trace: manifest.json says EFI_VOLUME_FULL for trace.pt"
copy notrace
rm "$TMP/notrace/trace.pt"
sed 's/"files":\[.*\]/"files":[]/' "$TMP/notrace/manifest.json" >"$TMP/m" && mv "$TMP/m" "$TMP/notrace/manifest.json"
expect_rc "decode: a run without a trace" 1 $EFIPT decode "$TMP/notrace"
contains "decode: a run without a trace named" "$TMP/err" "this run recorded no trace (manifest.json lists no trace.pt)"
copy dirtrace
rm "$TMP/dirtrace/trace.pt" && mkdir "$TMP/dirtrace/trace.pt" && manifest "$TMP/dirtrace"
sed -i 's/"size":[0-9]*/"size":4096/' "$TMP/dirtrace/manifest.json"
expect_rc "decode: trace.pt a directory" 1 $EFIPT decode "$TMP/dirtrace"
contains "decode: trace.pt a directory named" "$TMP/err" "trace.pt: listed in manifest.json as written, but a directory, not a file"
copy fifo
rm "$TMP/fifo/trace.pt" && mkfifo "$TMP/fifo/trace.pt"
sed -i 's/"size":[0-9]*/"size":0/' "$TMP/fifo/manifest.json"
expect_rc "decode: trace.pt a FIFO, no hang" 1 timeout 10 $EFIPT decode "$TMP/fifo"
contains "decode: trace.pt a FIFO named" "$TMP/err" "trace.pt: listed in manifest.json as written, but not a regular file"
copy fifosnap
rm "$TMP/fifosnap/mem-0000000000001000.bin" && mkfifo "$TMP/fifosnap/mem-0000000000001000.bin"
expect_rc "decode: snapshot a FIFO, no hang" 1 timeout 10 $EFIPT decode "$TMP/fifosnap"
contains "decode: snapshot a FIFO named" "$TMP/err" "mem-0000000000001000.bin: a FIFO, not a regular file"

# overlapping snapshots: decode and insn --run follow one rule
copy overlap
cp "$D/mem-0000000000001000.bin" "$TMP/overlap/mem-0000000000001800.bin"
cat >"$TMP/overlap/memmap.json" <<EOM
{"regions":[{"type":"LoaderCode","phys":"0x1000","pages":1,"attr":"0xf","snapshot":"mem-0000000000001000.bin"},
 {"type":"LoaderCode","phys":"0x1800","pages":1,"attr":"0xf","snapshot":"mem-0000000000001800.bin"}]}
EOM
expect_rc "decode: overlapping snapshots refused" 1 $EFIPT decode "$TMP/overlap"
cp "$TMP/err" "$TMP/err.decode"
contains "decode: overlap named" "$TMP/err" "memmap.json: the snapshot at 0x1800-0x27ff overlaps the one at 0x1000-0x1fff"
expect_rc "insn --run: overlapping snapshots refused" 2 $EFIPT insn --run "$TMP/overlap" --no-inst
sed 's/^efipt insn/efipt decode/' "$TMP/err" >"$TMP/err.insn"
expect "decode and insn --run: the same message" cmp -s "$TMP/err.decode" "$TMP/err.insn"

# terminal escapes in an image name reach the terminal as text
copy esc
printf '{"images":[{"name":"\\u001b[2J\\u001b]0;x\\u0007evil.efi","base":"0x1000","size":4096}]}' >"$TMP/esc/images.json"
expect_rc "decode: escapes in an image name" 0 $EFIPT decode "$TMP/esc"
if grep -q "$(printf '\033')" "$TMP/out" || grep -q "$(printf '\007')" "$TMP/out"; then nok "decode: no raw control characters" "$(od -c "$TMP/out" | head -5)"; else ok "decode: no raw control characters"; fi
contains "decode: the name shown escaped" "$TMP/out" '\x1b[2J\x1b]0;x\x07evil.efi'

# a huge memmap.json is refused before it is parsed
copy hugejson
truncate -s 65M "$TMP/hugejson/memmap.json"
expect_rc "decode: huge memmap.json refused" 1 $EFIPT decode "$TMP/hugejson"
contains "decode: huge memmap.json named" "$TMP/err" "memmap.json: 68157440 bytes, larger than any file efipt writes"

# getopt's own messages carry the efipt prefix too
for cmd in insn decode info packets synth caps; do
	$EFIPT $cmd --bogus >/dev/null 2>"$TMP/err"
	if head -1 "$TMP/err" | grep -q "^efipt $cmd: unrecognized option '--bogus'"; then ok "$cmd: getopt message prefixed"; else nok "$cmd: getopt message prefixed" "$(head -1 "$TMP/err")"; fi
done
