# A window --to N ends decoding soon after instruction N: at the next
# packet after the batch of blocks that passes it (at most 64 blocks), even
# where the decoder's fast loop would walk on. The trace: a loop of TNTs
# only (one PSB at its start: nothing else makes the loop stop), 9000
# instructions; top and timeline say how many instructions they decoded.
. tests/lib.sh
# f: test eax, eax; jne +0 (a TNT bit either way); call f
printf '\205\300\165\000\350\367\377\377\377' >"$TMP/code.bin"
head -c 4087 /dev/zero >>"$TMP/code.bin"
IMG="--raw $TMP/code.bin:0x1000"
$EFIPT synth $IMG --start 0x1000 --out "$TMP/t.pt" --insns 9000 --psb-period 65536 2>/dev/null
# decoded N: the count a command's output says is at least N and at most
# N plus a batch of these blocks (3 instructions each) and a TNT packet
decoded() {
	[ "$2" -ge "$1" ] && [ "$2" -le $(($1 + 64 * 3 + 47 * 3)) ]
}
expect_rc "stop: top whole" 0 $EFIPT top --pt "$TMP/t.pt" $IMG
expect "stop: top decodes the whole trace" grep -q '^9000 instructions' "$TMP/out"
for to in 900 3000; do
	expect_rc "stop: top --to $to" 0 $EFIPT top --pt "$TMP/t.pt" $IMG --to $to
	n=$(sed -n 's/^\([0-9]*\) instructions, .*/\1/p' "$TMP/out")
	expect "stop: top --to $to decodes $to and little more ($n)" decoded $to "${n:-0}"
	expect_rc "stop: timeline --to $to" 0 $EFIPT timeline --pt "$TMP/t.pt" $IMG --to $to \
		-o "$TMP/tl.json"
	n=$(python3 -c "import json; print(json.load(open('$TMP/tl.json'))['otherData']['instructions'])")
	expect "stop: timeline --to $to decodes $to and little more ($n)" decoded $to "${n:-0}"
done
