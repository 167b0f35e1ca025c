# Stacks deeper than the model keeps (CS_MAX_DEPTH, 1024 frames): a
# recursion that never returns is cut each time it goes deeper, and flame
# (without a window) says so on stderr as top says so in its summary, with
# the same count; no path in flame's output is longer than the model keeps.
. tests/lib.sh
# f: test eax, eax; jne +0 (a TNT bit either way); call f
printf '\205\300\165\000\350\367\377\377\377' >"$TMP/code.bin"
head -c 4087 /dev/zero >>"$TMP/code.bin"
IMG="--raw $TMP/code.bin:0x1000"
# 3 instructions a call: 3000 calls go past 1024 frames twice
$EFIPT synth $IMG --start 0x1000 --out "$TMP/t.pt" --insns 9000 2>/dev/null
expect_rc "deep: top" 0 $EFIPT top --pt "$TMP/t.pt" $IMG
cut=$(sed -n 's/.* \([0-9]*\) stacks cut at 1024 frames.*/\1/p' "$TMP/out")
expect "deep: top counts the cuts" test "${cut:-0}" -ge 2
expect_rc "deep: flame" 0 $EFIPT flame --pt "$TMP/t.pt" $IMG
contains "deep: flame says how many stacks it cut, as top does" "$TMP/err" \
	"efipt flame: ${cut:-?} stacks went deeper than 1024 frames: each was cut there"
expect "deep: no path longer than 1024 frames, and some that long" sh -c \
	"awk -F';' 'NF > m { m = NF } END { exit m != 1024 }' '$TMP/out'"
# 1000 calls: never that deep
$EFIPT synth $IMG --start 0x1000 --out "$TMP/s.pt" --insns 3000 2>/dev/null
expect_rc "deep: flame of a shallower recursion" 0 $EFIPT flame --pt "$TMP/s.pt" $IMG
expect "deep: flame says nothing of cuts where there were none" test ! -s "$TMP/err"
expect "deep: its deepest path has every frame the recursion made (1000)" sh -c \
	"awk -F';' 'NF > m { m = NF } END { exit m != 1000 }' '$TMP/out'"
