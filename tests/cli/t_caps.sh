# efipt caps --cpuid FILE on real CPU profiles, and bad input.
. tests/lib.sh
P=tests/data/cpu-profiles
expect_rc "caps: Skylake supported" 0 $EFIPT caps --cpuid $P/skylake-s-core-i7-6700k.txt
contains "caps: Skylake MTC periods listed" "$TMP/out" "MTC periods (MTCFreq, ART(n))              0 3 6 9  (bitmap 0x0249)"
contains "caps: Skylake PSB periods listed" "$TMP/out" "0 1 2 3 4 5  (bitmap 0x003f)"
expect_rc "caps: Broadwell supported" 0 $EFIPT caps --cpuid $P/broadwell-h-core-i7-5775c.txt
contains "caps: Broadwell single-entry ToPA" "$TMP/out" "ToPA tables with multiple output entries     no"
contains "caps: Broadwell has no subleaf 1" "$TMP/out" "CPUID.(EAX=14H,ECX=1) not enumerated"
expect_rc "caps: hypervisor profile unsupported" 3 $EFIPT caps --cpuid "$P/comet-lake-xeon-w-1290p-as-seen-under-a-hypervisor-negative-.txt"
contains "caps: names the CPUID bit" "$TMP/out" "Intel PT not supported: CPUID.(EAX=07H,ECX=0):EBX[25]=0 (GenuineIntel"
expect_rc "caps: json" 0 $EFIPT caps --json --cpuid $P/alder-lake-s-core-i9-12900k-p-core.txt
expect "caps: json parses" python3 -c "import json,sys; d=json.load(open('$TMP/out')); assert d['pt'] and d['ptwrite']"
# the decode errata of the CPU (core/cpu_model.c, libipt's selection)
expect_rc "caps: Raptor Lake supported" 0 $EFIPT caps --cpuid $P/raptor-lake-s-core-i9-13900k-p-core.txt
contains "caps: Raptor Lake errata listed" "$TMP/out" "Errata       bdm70 skd022 apl11 (Raptor Lake-S: the decoder works around these)"
contains "caps: Raptor Lake RPL017 quirk listed" "$TMP/out" "Quirk        single-range output above 4 KiB goes to ToPA (TGL052/ADL037/RPL017)"
expect_rc "caps: Raptor Lake json" 0 $EFIPT caps --json --cpuid $P/raptor-lake-s-core-i9-13900k-p-core.txt
expect "caps: Raptor Lake json errata" python3 -c "import json; d=json.load(open('$TMP/out')); assert d['errata'] == ['bdm70','skd022','apl11'], d['errata']"
expect_rc "caps: Skylake errata" 0 $EFIPT caps --cpuid $P/skylake-s-core-i7-6700k.txt
contains "caps: Skylake errata listed" "$TMP/out" "Errata       bdm70 skd007 skd022 skd010 skl014 skl168 (Skylake-S/H"
expect_rc "caps: Alder Lake-N" 0 $EFIPT caps --cpuid $P/alder-lake-n-core-i3-n305.txt
contains "caps: Alder Lake-N single-range quirk listed" "$TMP/out" "Quirk        single-range output above 4 KiB goes to ToPA"
expect_rc "caps: Lakefield not in the table" 0 $EFIPT caps --cpuid $P/lakefield-core-i5-l16g7-tremont-core.txt
contains "caps: unknown model says so" "$TMP/out" "Errata       none known: family 0x6 model 0x8a is not in efipt's CPU table"
expect_rc "caps: missing file" 2 $EFIPT caps --cpuid "$TMP/nope.txt"
contains "caps: missing file named" "$TMP/err" "$TMP/nope.txt: No such file or directory"
printf 'CPU:\n   0x00000000 0x00: eax=0x1 ebx=0x2\n' >"$TMP/bad.txt"
expect_rc "caps: malformed dump" 2 $EFIPT caps --cpuid "$TMP/bad.txt"
contains "caps: malformed line number" "$TMP/err" "bad.txt:2: not a 'cpuid -r' line"
head -c 100000 /dev/urandom >"$TMP/random.bin"
expect_rc "caps: random bytes rejected" 2 $EFIPT caps --cpuid "$TMP/random.bin"
expect_rc "caps: no --cpuid" 2 $EFIPT caps
expect_rc "caps: bad option" 2 $EFIPT caps --bogus
expect_rc "caps: help" 0 $EFIPT caps --help
contains "caps: help text" "$TMP/out" "usage: efipt caps --cpuid FILE"
expect_rc "efipt: unknown command" 2 $EFIPT frobnicate
contains "efipt: unknown command named" "$TMP/err" "unknown command 'frobnicate'"

# another vendor's dump with CPUID.(7,0):EBX[25]=1 and a leaf 14H: not Intel PT
sed 's/ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69/ebx=0x68747541 ecx=0x444d4163 edx=0x69746e65/' \
	$P/skylake-s-core-i7-6700k.txt >"$TMP/amd.txt"
grep -q 'ebx=0x68747541' "$TMP/amd.txt" || nok "caps: AuthenticAMD dump" "vendor not replaced"
expect_rc "caps: AuthenticAMD with the PT bit is unsupported" 3 $EFIPT caps --cpuid "$TMP/amd.txt"
contains "caps: the vendor string named" "$TMP/out" 'Intel PT not supported: the CPU vendor is "AuthenticAMD" (CPUID.(EAX=00H):EBX,EDX,ECX), not "GenuineIntel"'
expect_rc "plan: AuthenticAMD with the PT bit refused" 1 $EFIPT plan --cpuid "$TMP/amd.txt" --format jsonl
contains "plan: refusal names the vendor" "$TMP/out" 'the CPU vendor is \"AuthenticAMD\"'
[ -z "$(grep -i wrmsr "$TMP/out")" ] && ok "plan: AuthenticAMD: no WRMSR planned" || nok "plan: AuthenticAMD: no WRMSR planned" "$(head -c 300 "$TMP/out")"
