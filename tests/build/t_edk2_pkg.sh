# EfiptPkg's invariants that need no EDK2 build (edk2/, docs/edk2.md):
# the GUIDs its .dec declares are the ones efipt.efi uses (core/fwtrace.h),
# and its library builds efipt's own core/ and arch/x86_64 files, no copies.
. tests/lib.sh
P=edk2/EfiptPkg
# dec_guid NAME: the GUID NAME as 8-4-4-4-12 hex, from the .dec
dec_guid() {
	python3 - "$1" <<'EOF2'
import re, sys
s = open('edk2/EfiptPkg/EfiptPkg.dec').read()
m = re.search(sys.argv[1] + r'\s*=\s*\{([^}]*\{[^}]*\})\s*\}', s)
v = [int(x, 16) for x in re.findall(r'0x([0-9A-Fa-f]+)', m.group(1))]
print('%08X-%04X-%04X-%02X%02X-%s' % (v[0], v[1], v[2], v[3], v[4], ''.join('%02X' % b for b in v[5:])))
EOF2
}
# core_guid MACRO: the same from core/fwtrace.h's initialiser
core_guid() {
	python3 - "$1" <<'EOF2'
import re, sys
s = open('core/fwtrace.h').read().replace('\\\n', ' ')
m = re.search(r'#define ' + sys.argv[1] + r'\s*\{([^}]*\{[^}]*\})\s*\}', s)
v = [int(x, 16) for x in re.findall(r'0x([0-9A-Fa-f]+)', m.group(1))]
print('%08X-%04X-%04X-%02X%02X-%s' % (v[0], v[1], v[2], v[3], v[4], ''.join('%02X' % b for b in v[5:])))
EOF2
}
for pair in gEfiptBootTraceHobGuid:FWTRACE_HOB_GUID_INIT gEfiptBootTraceTableGuid:FWTRACE_TABLE_GUID_INIT \
	gEfiptNextBootVariableGuid:FWTRACE_VARIABLE_GUID_INIT; do
	d=$(dec_guid "${pair%%:*}" 2>&1) c=$(core_guid "${pair#*:}" 2>&1)
	[ -n "$d" ] && [ "$d" = "$c" ] && ok "EfiptPkg.dec's ${pair%%:*} is efipt.efi's ($d)" ||
		nok "EfiptPkg.dec's ${pair%%:*} is efipt.efi's" ".dec $d, core/fwtrace.h $c"
done
contains "the variable's name agrees" "$P/Include/Guid/EfiptBootTrace.h" 'L"EfiptNextBoot"'
contains "the variable's name agrees (core)" core/fwtrace.h '"EfiptNextBoot"'
# the library's sources: efipt's files themselves
missing=""
n=0
for s in $(sed -n '/^\[Sources\]/,/^\[/p' $P/Library/EfiptCoreLib/EfiptCoreLib.inf | grep '\.c$'); do
	f=$P/Library/EfiptCoreLib/$s
	[ -f "$f" ] || missing="$missing $s"
	case "$s" in ../../../../core/* | ../../../../arch/x86_64/*) n=$((n + 1)) ;; esac
done
[ -z "$missing" ] && [ "$n" -gt 10 ] && ok "EfiptCoreLib.inf lists $n of efipt's core/ and arch/ files, all there" ||
	nok "EfiptCoreLib.inf's sources exist" "missing:$missing ($n from core/arch)"
copies=""
for f in $(find edk2 -name '*.c'); do
	b=$(basename "$f")
	[ -f "core/$b" ] || [ -f "arch/x86_64/$b" ] && copies="$copies $f"
done
[ -z "$copies" ] && ok "no copy of a core/ or arch/ file under edk2/" || nok "no copy of a core/ or arch/ file under edk2/" "$copies"
