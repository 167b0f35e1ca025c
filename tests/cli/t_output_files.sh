# -o FILE: a file is written under a temporary name and renamed over FILE
# (host/util/file_io.h). A symbolic link to a file stays a link, and the
# file it leads to gets the output; a stream's name (a link into /proc/, as
# /dev/stdout is one: never renamed over here, whatever this test finds)
# and a FIFO are written in place. For every command that writes with -o.
. tests/lib.sh
. tests/cli/lib_rundir.sh
# out NAME: each command's output into $TMP/NAME
out() {
	$EFIPT timeline --to 30 "$D" -o "$TMP/$1.json" &&
		$EFIPT coverage "$D" -o "$TMP/$1.drcov" &&
		$EFIPT synth --raw "$D/mem-0000000000001000.bin:0x1000" --start 0x1000 --insns 100 \
			--out "$TMP/$1.pt"
}
expect "output: plain files" out want
for ext in json drcov pt; do
	echo old >"$TMP/real.$ext"
	ln -s "real.$ext" "$TMP/link.$ext"
	ln -s /proc/self/fd/1 "$TMP/stream.$ext"
done
expect "output: through links to files" out link
for ext in json drcov pt; do
	expect "output: -o link.$ext: still a link" test -L "$TMP/link.$ext"
	expect "output: -o link.$ext: the file it leads to written" cmp "$TMP/real.$ext" "$TMP/want.$ext"
done
for ext in json drcov pt; do
	case $ext in
	json) $EFIPT timeline --to 30 "$D" -o "$TMP/stream.json" >"$TMP/got.json" ;;
	drcov) $EFIPT coverage "$D" -o "$TMP/stream.drcov" >"$TMP/got.drcov" ;;
	pt) $EFIPT synth --raw "$D/mem-0000000000001000.bin:0x1000" --start 0x1000 --insns 100 \
		--out "$TMP/stream.pt" >"$TMP/got.pt" 2>/dev/null ;;
	esac
	expect "output: -o a link to standard output (redirected to a file): still a link" \
		test -L "$TMP/stream.$ext"
	expect "output: -o a link to standard output: the output on standard output ($ext)" \
		cmp "$TMP/got.$ext" "$TMP/want.$ext"
done
mkfifo "$TMP/fifo.drcov"
cat "$TMP/fifo.drcov" >"$TMP/got-fifo.drcov" &
expect "output: -o a FIFO" timeout 20 $EFIPT coverage "$D" -o "$TMP/fifo.drcov"
wait
expect "output: a FIFO is written in place" cmp "$TMP/got-fifo.drcov" "$TMP/want.drcov"
expect "output: no temporary file left" sh -c "! ls '$TMP' | grep -q tmp-"
