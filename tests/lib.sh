# Shared helpers for test scripts (sourced). Each check prints one
# "ok - NAME" or "not ok - NAME: why" line, which tests/run.sh counts.
EFIPT=${EFIPT:-build/efipt}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
ok() { printf 'ok - %s\n' "$1"; }
nok() { printf 'not ok - %s: %s\n' "$1" "$2"; }
# expect NAME CONDITION-COMMAND...: ok if the command succeeds
expect() {
	name=$1
	shift
	if "$@" >/dev/null 2>&1; then ok "$name"; else nok "$name" "failed: $*"; fi
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
