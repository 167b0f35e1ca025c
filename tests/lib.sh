# Shared helpers for test scripts (sourced). Each check prints one
# "ok - NAME" or "not ok - NAME: why" line, which tests/run.sh counts.
EFIPT=${EFIPT:-build/efipt}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
ok() { printf 'ok - %s\n' "$1"; }
# the detail on one line: a test run's summary shows only "not ok" lines
nok() { printf 'not ok - %s: %s\n' "$1" "$(printf '%s' "$2" | tr '\n' ' ')"; }
# expect NAME CONDITION-COMMAND...: ok if the command succeeds
expect() {
	name=$1
	shift
	if "$@" >"$TMP/expect.out" 2>&1; then
		ok "$name"
	else
		nok "$name" "failed: $*; output: $(tail -c 300 "$TMP/expect.out")"
	fi
}
# expect_rc NAME RC COMMAND...: run the command, compare its exit status
expect_rc() {
	name=$1 want=$2
	shift 2
	"$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	if [ "$got" -eq "$want" ]; then ok "$name"; else nok "$name" "exit $got, wanted $want; stderr: $(head -c 300 "$TMP/err")"; fi
}
# contains NAME FILE TEXT: the file contains the fixed string
contains() {
	if grep -qF -- "$3" "$2"; then ok "$1"; else nok "$1" "'$3' not in $(basename "$2"): $(head -c 400 "$2")"; fi
}
# build_output NAME: B, EFI (efipt.efi), SO (the gnu-efi ELF it was made
# from), BASE and PE (--pe EFI:BASE) for checks on real build output; when
# they are missing, one "not ok" and the script ends. The firmware build is
# not sanitized: build/ has it when $EFIPT_BUILD (build/san/) does not.
build_output() {
	B=${EFIPT_BUILD:-build}
	[ -f "$B/efipt.efi" ] || B=build
	EFI=$B/efipt.efi
	SO=$B/efipt.so
	BASE=0x1000000
	PE="--pe $EFI:$BASE"
	if [ ! -f "$EFI" ] || [ ! -f "$SO" ]; then
		nok "$1: build output" "$EFI or $SO missing (make all)"
		exit 0
	fi
}
# run_manifest DIR FILE...: DIR/manifest.json of a finished trace command
# whose files are FILE... (in DIR, with their sizes)
run_manifest() {
	rdir=$1
	shift
	files=""
	for f in "$@"; do
		files="$files${files:+,}{\"name\":\"$f\",\"size\":$(stat -c %s "$rdir/$f"),\"status\":\"written\"}"
	done
	cat >"$rdir/manifest.json" <<EOM
{"format":"efipt-run","format_version":1,"efipt_version":"0.1.0","efipt_gitrev":"x",
 "run_id":"20260101-000000-000","started":"2026-01-01T00:00:00","command":"trace",
 "command_line":"trace","firmware":{"vendor":"EDK II","revision":"0x1","uefi":"2.7"},
 "cpu":{"vendor":"GenuineIntel","signature":"0x000506e3","family":6,"model":94,"stepping":3},
 "files":[$files],
 "status":{"result":"ok","efi_status":"EFI_SUCCESS","message":"trace"}}
EOM
}
# merged_cleanly NAME FILES... -- MERGE-ARGS...: efipt coverage --merge of
# each FILE (then MERGE-ARGS) into $TMP/merged.out must succeed, or be
# refused with exit 1 and no output file; never a crash or another status
merged_cleanly() {
	mname=$1
	shift
	mfiles=""
	while [ "$1" != "--" ]; do mfiles="$mfiles $1"; shift; done
	shift
	mbad=""
	for f in $mfiles; do
		rm -f "$TMP/merged.out"
		$EFIPT coverage --merge "$f" "$@" -o "$TMP/merged.out" >/dev/null 2>&1
		rc=$?
		if [ "$rc" -gt 1 ] || { [ "$rc" -eq 1 ] && [ -e "$TMP/merged.out" ]; }; then
			mbad="$mbad $(basename "$f"):$rc"
		fi
	done
	if [ -z "$mbad" ]; then ok "$mname"; else nok "$mname" "$mbad"; fi
}
