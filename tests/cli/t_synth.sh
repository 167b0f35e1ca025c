# efipt synth: its files are complete or absent, and its options say what
# they take.
. tests/lib.sh
ELF=/usr/bin/bash
# a file size limit: writes past 8 KiB fail with EFBIG (SIGXFSZ ignored)
( trap '' XFSZ; ulimit -f 8; exec $EFIPT synth --elf $ELF --out "$TMP/big.pt" --truth "$TMP/big.truth" --insns 200000 ) 2>"$TMP/err"
rc=$?
[ "$rc" -eq 2 ] && ok "synth: failed trace write exits 2" || nok "synth: failed trace write exits 2" "exit $rc"
contains "synth: failed write named" "$TMP/err" "big.pt: write error: File too large"
if ls "$TMP" | grep -q big; then nok "synth: nothing left after a failed write" "$(ls "$TMP")"; else ok "synth: nothing left after a failed write"; fi
# the truth file fails (it is larger than the trace): the trace goes too
( trap '' XFSZ; ulimit -f 200; exec $EFIPT synth --elf $ELF --out "$TMP/t.pt" --truth "$TMP/t.truth" --insns 200000 ) 2>"$TMP/err"
rc=$?
[ "$rc" -eq 2 ] && ok "synth: failed truth write exits 2" || nok "synth: failed truth write exits 2" "exit $rc"
if ls "$TMP" | grep -q '^t\.'; then nok "synth: no trace without its truth" "$(ls "$TMP")"; else ok "synth: no trace without its truth"; fi
# an existing file is untouched when the new one cannot be written
echo old >"$TMP/keep.truth"
expect_rc "synth: output in a missing directory" 2 $EFIPT synth --elf $ELF --out "$TMP/nodir/x.pt" --truth "$TMP/keep.truth" --insns 2000
contains "synth: missing directory named" "$TMP/err" "nodir/x.pt: cannot create a temporary file next to it"
contains "synth: the old truth file kept" "$TMP/keep.truth" "old"
# --size: K/M/G; 0 or below 4K refused, naming the option and the range
expect_rc "synth: --size 64K" 0 $EFIPT synth --elf $ELF --out "$TMP/s.pt" --size 64K --insns 0
s=$(stat -c %s "$TMP/s.pt" 2>/dev/null || echo 0)
[ "$s" -gt 60000 ] && [ "$s" -le 65536 ] && ok "synth: --size 64K --insns 0 fills 64K" || nok "synth: --size 64K --insns 0 fills 64K" "$s bytes"
contains "synth: --insns 0 stops at a full buffer" "$TMP/err" "stopped: buffer full"
expect_rc "synth: --size 0 refused" 2 $EFIPT synth --elf $ELF --out "$TMP/z.pt" --size 0
contains "synth: --size range named" "$TMP/err" "--size takes a byte count from 4K"
$EFIPT synth --help >"$TMP/help"
contains "synth --help: exit status" "$TMP/help" "Exit status: 0 written"
contains "synth --help: --insns 0" "$TMP/help" "0: no budget"
# an output that is not a regular file (a FIFO, /dev/full) is written in
# place, never replaced by a renamed file
mkfifo "$TMP/fifo.pt"
cat "$TMP/fifo.pt" >"$TMP/fromfifo.pt" &
reader=$!
timeout 20 $EFIPT synth --elf $ELF --out "$TMP/fifo.pt" --insns 2000 2>"$TMP/err"
rc=$?
wait $reader
$EFIPT synth --elf $ELF --out "$TMP/file.pt" --insns 2000 2>/dev/null
if [ "$rc" -eq 0 ] && [ -p "$TMP/fifo.pt" ] && cmp -s "$TMP/fromfifo.pt" "$TMP/file.pt"; then ok "synth: --out FIFO written in place"; else nok "synth: --out FIFO written in place" "exit $rc: $(ls -l "$TMP/fifo.pt")"; fi
expect_rc "synth: --out /dev/full fails" 2 $EFIPT synth --elf $ELF --out /dev/full --insns 2000
contains "synth: --out /dev/full named" "$TMP/err" "/dev/full: write error: No space left on device"
# the command line, an option table like every command's: each bad value
# refused by name, nothing written
expect_rc "synth: --bits 48 refused" 2 $EFIPT synth --elf $ELF --out "$TMP/no.pt" --bits 48
contains "synth: --bits named" "$TMP/err" "efipt synth: --bits is 16, 32 or 64, not '48'"
expect_rc "synth: --size 1K refused" 2 $EFIPT synth --elf $ELF --out "$TMP/no.pt" --size 1K
contains "synth: --size named" "$TMP/err" "--size takes a byte count from 4K to 1024G"
expect_rc "synth: --seed x refused" 2 $EFIPT synth --elf $ELF --out "$TMP/no.pt" --seed x
contains "synth: --seed named" "$TMP/err" "--seed takes a number, not 'x'"
expect_rc "synth: no --out" 2 $EFIPT synth --elf $ELF
contains "synth: --out asked for" "$TMP/err" "--out TRACE is required"
expect_rc "synth: no image" 2 $EFIPT synth --out "$TMP/no.pt"
contains "synth: an image asked for" "$TMP/err" "a code image is required"
expect_rc "synth: an operand refused" 2 $EFIPT synth --elf $ELF --out "$TMP/no.pt" stray
expect_rc "synth: an unreadable image named" 2 $EFIPT synth --elf "$TMP/none.elf" --out "$TMP/no.pt"
contains "synth: the image's path in the message" "$TMP/err" "none.elf"
expect "synth: nothing written by a refused command line" test ! -e "$TMP/no.pt"
expect_rc "synth: --psb-period=128 (the = form)" 0 $EFIPT synth --elf $ELF --out "$TMP/p.pt" --insns 500 --psb-period=128
