# efipt insn: ptxed-like instruction listing from a trace and code images.
# Traces come from 'efipt synth' (which also writes the ground truth: every
# executed instruction address) over real programs and efipt.efi itself.
. tests/lib.sh
BASH_ELF=/usr/bin/bash
EFI=build/efipt.efi

# ELF, with interrupts and overflows: the listing equals the ground truth
$EFIPT synth --elf $BASH_ELF --out "$TMP/b.pt" --truth "$TMP/b.truth" --insns 30000 \
	--interrupts 50 --ovf 500 --seed 3 2>/dev/null
expect_rc "insn: elf decodes cleanly" 0 $EFIPT insn --pt "$TMP/b.pt" --elf $BASH_ELF --no-inst
grep -v '^\[' "$TMP/out" >"$TMP/b.ips"
if cmp -s "$TMP/b.ips" "$TMP/b.truth" && [ -s "$TMP/b.truth" ]; then
	ok "insn: elf listing equals ground truth ($(wc -l <"$TMP/b.truth") instructions)"
else
	nok "insn: elf listing equals ground truth" "$(diff "$TMP/b.ips" "$TMP/b.truth" | head -3)"
fi
contains "insn: enabled event" "$TMP/out" "[enabled, ip: "
contains "insn: overflow event" "$TMP/out" "[overflow]"
contains "insn: interrupt event" "$TMP/out" "[interrupt, from: "

# disassembly (Zydis) by default
expect_rc "insn: disassembly" 0 $EFIPT insn --pt "$TMP/b.pt" --elf $BASH_ELF
if grep -qE '^[0-9a-f]{16}  [a-z]' "$TMP/out"; then ok "insn: %016llx ip then disassembly"; else nok "insn: %016llx ip then disassembly" "$(head -3 "$TMP/out")"; fi

# --stat counts
expect_rc "insn: --stat" 0 $EFIPT insn --pt "$TMP/b.pt" --elf $BASH_ELF --stat
contains "insn: --stat instruction count" "$TMP/out" "insn: $(wc -l <"$TMP/b.truth")"
contains "insn: --stat no errors" "$TMP/out" "errors: 0"

# PE32+ relocated to another base: same code, shifted addresses
$EFIPT synth --pe $EFI:0x40000000 --out "$TMP/e.pt" --truth "$TMP/e.truth" --insns 20000 \
	--interrupts 30 --disable 300 2>/dev/null
expect_rc "insn: pe at a load base" 0 $EFIPT insn --pt "$TMP/e.pt" --pe $EFI:0x40000000 --no-inst
grep -v '^\[' "$TMP/out" >"$TMP/e.ips"
if cmp -s "$TMP/e.ips" "$TMP/e.truth" && [ -s "$TMP/e.truth" ]; then ok "insn: pe listing equals ground truth"; else nok "insn: pe listing equals ground truth" "$(diff "$TMP/e.ips" "$TMP/e.truth" | head -3)"; fi
if head -1 "$TMP/e.truth" | grep -q '^00000000400'; then ok "insn: pe placed at the load base"; else nok "insn: pe placed at the load base" "$(head -1 "$TMP/e.truth")"; fi
expect_rc "insn: pe at the wrong base is an error" 1 $EFIPT insn --pt "$TMP/e.pt" --pe $EFI --no-inst
contains "insn: error line names offset and ip" "$TMP/out" ": error: "

# raw code: a hand-assembled loop with a call (see core/pt_flow_check.c)
printf '\061\300\377\300\350\007\000\000\000\203\370\020\165\364\377\343\205\300\164\002\220\220\303' >"$TMP/code.bin"
$EFIPT synth --raw "$TMP/code.bin:0x1000" --start 0x1000 --out "$TMP/r.pt" --truth "$TMP/r.truth" --insns 500 2>/dev/null
expect_rc "insn: raw image" 0 $EFIPT insn --pt "$TMP/r.pt" --raw "$TMP/code.bin:0x1000" --no-inst
grep -v '^\[' "$TMP/out" >"$TMP/r.ips"
if cmp -s "$TMP/r.ips" "$TMP/r.truth" && [ -s "$TMP/r.truth" ]; then ok "insn: raw listing equals ground truth"; else nok "insn: raw listing equals ground truth" "$(diff "$TMP/r.ips" "$TMP/r.truth" | head -3)"; fi
# DisTNT: the flow is lost at each Jcc until the next IP packet
$EFIPT synth --raw "$TMP/code.bin:0x1000" --start 0x1000 --out "$TMP/g.pt" --insns 2000 --distnt --disretc 2>/dev/null
expect_rc "insn: distnt decodes cleanly" 0 $EFIPT insn --pt "$TMP/g.pt" --raw "$TMP/code.bin:0x1000" --no-inst --distnt --disretc
contains "insn: distnt gap" "$TMP/out" "[gap, ip: "
expect_rc "insn: raw range" 0 $EFIPT insn --pt "$TMP/r.pt" --raw "$TMP/code.bin:0x0-0x17:0x1000" --no-inst
# only part of the code: no code at an address, named in the error
expect_rc "insn: missing code" 1 $EFIPT insn --pt "$TMP/r.pt" --raw "$TMP/code.bin:0x0-0x10:0x1000" --no-inst
contains "insn: no code error names the address" "$TMP/out" "0000000000001010: error: no code at 0000000000001010 (not in any image)"

# opt-in packets (SDM 33.7): TSX, power events, Event Trace, mode changes
$EFIPT synth --elf $BASH_ELF --out "$TMP/k.pt" --truth "$TMP/k.truth" --insns 30000 --seed 3 \
	--interrupts 50 --tsx 300 --power 200 --event-trace --mode 30000 --disable 500 2>/dev/null
expect_rc "insn: tsx, power, cfe, mode changes decode cleanly" 0 $EFIPT insn --pt "$TMP/k.pt" --elf $BASH_ELF --no-inst
grep -v '^\[' "$TMP/out" >"$TMP/k.ips"
if cmp -s "$TMP/k.ips" "$TMP/k.truth" && [ -s "$TMP/k.truth" ]; then ok "insn: listing with tsx, power, cfe equals ground truth"; else nok "insn: listing with tsx, power, cfe equals ground truth" "$(diff "$TMP/k.ips" "$TMP/k.truth" | head -3)"; fi
contains "insn: tsx begin" "$TMP/out" "[begin transaction]"
contains "insn: tsx abort" "$TMP/out" "[aborted]"
contains "insn: exstop with ip" "$TMP/out" "[exstop, ip: "
contains "insn: pwrx" "$TMP/out" "[pwrx: 822]"
contains "insn: cfe" "$TMP/out" "[cfe: "
contains "insn: exec mode change" "$TMP/out" "[exec mode: 32-bit]"
# PTWRITE (PTWEn, FUPonPTW) in raw code: ptwrite rax; jmp 0x1000
printf '\363\110\017\256\340\353\371' >"$TMP/ptw.bin"
$EFIPT synth --raw "$TMP/ptw.bin:0x1000" --start 0x1000 --out "$TMP/p.pt" --insns 100 --ptwrite --fup-on-ptw 2>/dev/null
expect_rc "insn: ptwrite decodes cleanly" 0 $EFIPT insn --pt "$TMP/p.pt" --raw "$TMP/ptw.bin:0x1000" --no-inst
contains "insn: ptwrite event" "$TMP/out" "[ptwrite: "
expect_rc "synth: bad --bits" 2 $EFIPT synth --elf $BASH_ELF --out "$TMP/x.pt" --bits 8

# a corrupted trace: error with offset, resync at the next PSB, exit 1
$EFIPT synth --elf $BASH_ELF --out "$TMP/c.pt" --insns 200000 --seed 5 2>/dev/null
size=$(wc -c <"$TMP/c.pt")
python3 -c "
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
for i in range(len(b) // 3, len(b) // 3 + 40):
    b[i] = 0xd9
open(sys.argv[1], 'wb').write(b)" "$TMP/c.pt"
expect_rc "insn: corrupted trace exits 1" 1 $EFIPT insn --pt "$TMP/c.pt" --elf $BASH_ELF --no-inst
if grep -qE '^\[[0-9a-f]+, [0-9a-f]{16}: error: ' "$TMP/out"; then ok "insn: error line format"; else nok "insn: error line format" "$(grep error "$TMP/out" | head -2)"; fi
last=$(grep -n 'error' "$TMP/out" | tail -1 | cut -d: -f1)
total=$(wc -l <"$TMP/out")
if [ "$((total - last))" -gt 1000 ]; then ok "insn: decoding resumes after the error"; else nok "insn: decoding resumes after the error" "only $((total - last)) lines after it"; fi

# arguments
expect_rc "insn: no image" 2 $EFIPT insn --pt "$TMP/b.pt"
expect_rc "insn: bad --cpu" 2 $EFIPT insn --pt "$TMP/b.pt" --elf $BASH_ELF --cpu 6
expect_rc "insn: --cpu F/M/S" 0 $EFIPT insn --pt "$TMP/b.pt" --elf $BASH_ELF --cpu 6/0x4e/3 --stat
expect_rc "insn: overlapping images" 2 $EFIPT insn --pt "$TMP/b.pt" --elf $BASH_ELF --elf $BASH_ELF
contains "insn: overlap is named" "$TMP/err" "overlaps"
expect_rc "insn: not an ELF" 2 $EFIPT insn --pt "$TMP/b.pt" --elf "$TMP/b.pt"
expect_rc "insn: not a PE" 2 $EFIPT insn --pt "$TMP/b.pt" --pe "$TMP/b.pt"
expect_rc "insn: missing trace file" 2 $EFIPT insn --pt "$TMP/nope" --elf $BASH_ELF

# untrusted image files: truncated or corrupted headers are refused, never a crash
head -c 300 $EFI >"$TMP/short.efi"
expect_rc "insn: truncated PE refused" 2 $EFIPT insn --pt "$TMP/b.pt" --pe "$TMP/short.efi"
head -c 100 $BASH_ELF >"$TMP/short.elf"
expect_rc "insn: truncated ELF refused" 2 $EFIPT insn --pt "$TMP/b.pt" --elf "$TMP/short.elf"
python3 -c "
import sys, struct
b = bytearray(open(sys.argv[1], 'rb').read())
pe = struct.unpack_from('<I', b, 0x3c)[0]
struct.pack_into('<H', b, pe + 6, 0xffff)   # NumberOfSections
open(sys.argv[2], 'wb').write(b)" $EFI "$TMP/bad.efi"
expect_rc "insn: PE with a bad section count refused" 2 $EFIPT insn --pt "$TMP/b.pt" --pe "$TMP/bad.efi"
contains "insn: PE error says why" "$TMP/err" "outside the file"

# --time (SDM 33.8.3): a hand-made trace over the raw code. PSB+ with TSC
# 0x1000, TMA CTC 0x10 FastCounter 30, CBR 10; TIP.PGE; CYC 20; FUP+TIP.PGD;
# MTC 0x11; TIP.PGE; FUP+TIP.PGD. With P = 100, MTCFreq 0, nominal ratio 20:
# the CYC adds 20 * 20 / 10 = 0x28, the MTC is one crystal clock tick after
# the edge before the TSC: 0x1000 - 30 + 100 = 0x1046.
printf '\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\202''\031\000\020\000\000\000\000\000''\002\163\020\000\000\036\000''\002\003\012\000\002\043\231\001''\321\000\020\000\000\000\000\000\000''\243''\335\000\020\000\000\000\000\000\000\001''\131\021''\321\000\020\000\000\000\000\000\000''\335\000\020\000\000\000\000\000\000\001' >"$TMP/t.pt"
expect_rc "insn: --time" 0 $EFIPT insn --pt "$TMP/t.pt" --raw "$TMP/code.bin:0x1000" --time \
	--cpuid-0x15 1,100 --mtc-freq 0 --nom-freq 20
printf '%s\n' '[0000000000001000 enabled, ip: 0000000000001000]' \
	'[0000000000001028 async disabled, ip: 0000000000001000]' \
	'[0000000000001046 enabled, ip: 0000000000001000]' \
	'[0000000000001046 async disabled, ip: 0000000000001000]' >"$TMP/t.want"
if cmp -s "$TMP/out" "$TMP/t.want"; then ok "insn: --time: tsc, cyc * nom / cbr, mtc after tma with fastcounter"; else nok "insn: --time: tsc, cyc * nom / cbr, mtc after tma with fastcounter" "$(cat "$TMP/out")"; fi
expect_rc "insn: --time without ratios" 0 $EFIPT insn --pt "$TMP/t.pt" --raw "$TMP/code.bin:0x1000" --time
if [ "$(grep -c '^\[0000000000001000 ' "$TMP/out")" = 4 ]; then ok "insn: --time without ratios: the tsc only"; else nok "insn: --time without ratios: the tsc only" "$(cat "$TMP/out")"; fi
expect_rc "insn: no --time" 0 $EFIPT insn --pt "$TMP/t.pt" --raw "$TMP/code.bin:0x1000"
contains "insn: no --time, no time stamps" "$TMP/out" "[enabled, ip: 0000000000001000]"

# option values: the option and its range are named; --cache below 8 is no cache
expect_rc "insn: --mtc-freq 16 refused" 2 $EFIPT insn --pt "$TMP/r.pt" --raw "$TMP/code.bin:0x1000" --mtc-freq 16
contains "insn: --mtc-freq range named" "$TMP/err" "efipt insn: --mtc-freq takes a number from 0 to 15, not '16'"
expect_rc "insn: --max-steps ' -5' refused" 2 $EFIPT insn --pt "$TMP/r.pt" --raw "$TMP/code.bin:0x1000" --max-steps " -5"
contains "insn: --max-steps named" "$TMP/err" "--max-steps takes a count"
expect_rc "insn: --cache 3 is no cache" 0 $EFIPT insn --pt "$TMP/r.pt" --raw "$TMP/code.bin:0x1000" --no-inst --cache 3
grep -v '^\[' "$TMP/out" >"$TMP/r3.ips"
expect "insn: --cache 3 listing equals ground truth" cmp -s "$TMP/r3.ips" "$TMP/r.truth"
expect_rc "insn: --cache 12 refused" 2 $EFIPT insn --pt "$TMP/r.pt" --raw "$TMP/code.bin:0x1000" --cache 12
contains "insn: --cache range named" "$TMP/err" "--cache takes a power of two from 8 to 16777216, or 0..7 for no cache"
$EFIPT insn --help >"$TMP/help"
contains "insn --help: exit status" "$TMP/help" "Exit status: 0 if the trace decoded without errors"

# memory from small inputs: a 10 MB ELF whose 200 executable segments all
# cover the whole file is refused, not copied 200 times (2 GB; the address
# space limit makes a copying loader fail instead of swapping; AddressSanitizer
# reserves terabytes of shadow memory, so a sanitized run checks only the message)
mem_limited() {
	if [ -n "${EFIPT_SANITIZED:-}" ]; then "$@"; else (ulimit -v 1000000; exec "$@"); fi
}
python3 tests/cli/hostile_elf.py 200 10000000 "$TMP/h200.elf"
printf '\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\202' >"$TMP/psb.pt"
mem_limited $EFIPT insn --pt "$TMP/psb.pt" --elf "$TMP/h200.elf" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" -eq 2 ] && ok "insn: hostile ELF refused" || nok "insn: hostile ELF refused" "exit $rc"
contains "insn: hostile ELF named" "$TMP/err" "h200.elf: executable segments overlap in the file"
python3 tests/cli/hostile_elf.py 4000 100000 "$TMP/h4000.elf"
mem_limited $EFIPT insn --pt "$TMP/psb.pt" --elf "$TMP/h4000.elf" >"$TMP/out" 2>"$TMP/err"
contains "insn: 4000 overlapping segments named" "$TMP/err" "h4000.elf: executable segments overlap in the file"

# a directory or FIFO where a file is expected: said so, no hang
mkdir -p "$TMP/adir"
expect_rc "insn: --elf DIR" 2 $EFIPT insn --pt "$TMP/r.pt" --elf "$TMP/adir"
contains "insn: --elf DIR named" "$TMP/err" "adir: a directory, not a regular file"
mkfifo "$TMP/afifo"
expect_rc "insn: --raw FIFO, no hang" 2 timeout 10 $EFIPT insn --pt "$TMP/r.pt" --raw "$TMP/afifo:0x1000"
contains "insn: --raw FIFO named" "$TMP/err" "afifo: a FIFO, not a regular file"
expect_rc "caps: --cpuid DIR" 2 $EFIPT caps --cpuid "$TMP/adir"
contains "caps: --cpuid DIR named" "$TMP/err" "efipt caps: $TMP/adir: a directory, not a regular file"

# errata: a trace with erratum BDM70's pattern (a real CPU from Broadwell to
# Raptor Lake puts FUP and MODE.Exec into the PSB+ before the TIP.PGE that
# starts tracing: here injected into a synthesized trace). Without --cpu
# the workarounds that cannot change the decode of a trace that follows
# the SDM apply, BDM70's among them: it decodes whole, and says so
$EFIPT synth --pe $EFI --out "$TMP/g.pt" --truth "$TMP/g.truth" --insns 20000 --seed 4 2>/dev/null
python3 - "$TMP/g.pt" "$TMP/bdm70.pt" "$TMP/skz84.pt" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
end = d.index(b"\x02\x23")  # the first PSBEND
fup = b"\x7d" + (0x1000).to_bytes(6, "little")  # FUP, IPBytes 011: 48 bits
open(sys.argv[2], "wb").write(d[:end] + fup + d[end:])
tma = b"\x02\x73\x01\x00\x00\x00\x00"  # TMA CTC 1, FC 0
open(sys.argv[3], "wb").write(d[:end] + tma + b"\xd9" + d[end:])
PY
expect_rc "errata: bdm70's pattern without --cpu decodes" 0 $EFIPT insn --pt "$TMP/bdm70.pt" --pe $EFI --stat
contains "errata: every instruction decoded" "$TMP/out" "insn: $(wc -l <"$TMP/g.truth")"
contains "errata: the workarounds applied are named" "$TMP/err" "applied the workarounds of erratum BDM70, APL12, which act only where a trace breaks the SDM's rules"
expect_rc "errata: the same trace, a CPU without bdm70 (--cpu 6/0x2a): an error" 1 $EFIPT insn --pt "$TMP/bdm70.pt" --pe $EFI --cpu 6/0x2a --stat
contains "errata: the error says which erratum it looks like, with --cpu" "$TMP/err" "it looks like erratum BDM70, APL12: if the CPU that recorded the trace has it, give its --cpu FAMILY/MODEL"
expect_rc "errata: skz84's pattern without --cpu: an error" 1 $EFIPT insn --pt "$TMP/skz84.pt" --pe $EFI --no-inst
contains "errata: skz84 named, with --cpu" "$TMP/err" "it looks like erratum SKZ84: if the CPU that recorded the trace has it, give its --cpu FAMILY/MODEL"
expect_rc "errata: skz84's pattern with its CPU (--cpu 6/0x55) decodes" 0 $EFIPT insn --pt "$TMP/skz84.pt" --pe $EFI --cpu 6/0x55 --stat
contains "errata: skz84 with its CPU: every instruction" "$TMP/out" "insn: $(wc -l <"$TMP/g.truth")"
