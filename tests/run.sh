#!/bin/sh
# Run every test program (build/tests/test_*) and every test script
# (tests/*/t_*.sh), count their "ok"/"not ok" lines, and finish with the
# line "N passed, N failed". A program that exits non-zero without printing
# a "not ok" line (a crash, a timeout) counts as one failure.
# Usage: tests/run.sh [PATTERN]   (PATTERN filters program/script names)
# Environment (make SANITIZE=1 test): EFIPT_BUILD, the build directory
# (build); EFIPT_TEST_DIRS, which tests/*/ to run scripts from (all);
# EFIPT_SANITIZED=1, a test fails on any ASan/UBSan report. With
# $EFIPT_BUILD/qemu10/ready (mk/qemu10.mk) the plugin's QEMU tests run a
# second time against that QEMU, named qemu10/t_....
set -u
cd "$(dirname "$0")/.." || exit 2
pattern=${1:-}
pass=0
fail=0
build=${EFIPT_BUILD:-build}
export EFIPT_BUILD="$build" EFIPT="${EFIPT:-$build/efipt}"
log=$build/tests/log
mkdir -p "$log"
if [ -n "${EFIPT_SANITIZED:-}" ]; then
	# reports go to files, so that one from a program whose exit status a
	# script expected to be non-zero still fails the test
	export ASAN_OPTIONS="log_path=$PWD/$log/san:${ASAN_OPTIONS:-}"
	export UBSAN_OPTIONS="log_path=$PWD/$log/san:print_stacktrace=1:${UBSAN_OPTIONS:-}"
fi
run_one() {
	name=$1
	shift
	out="$log/$(echo "$name" | tr / _).out"
	rm -f "$log"/san.*
	start=$(date +%s)
	# no test may hang the run: each program or script gets at most 20 min
	timeout --kill-after=10 1200 "$@" >"$out" 2>&1
	rc=$?
	p=$(grep -c '^ok ' "$out" || true)
	f=$(grep -c '^not ok ' "$out" || true)
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name: exited with status $rc" >>"$out"
		f=1
	fi
	for r in "$log"/san.*; do
		[ -f "$r" ] || continue
		echo "not ok - $name: sanitizer: $(grep -m 1 -E 'ERROR|runtime error' "$r")" >>"$out"
		mv "$r" "$out.${r##*/}"
		f=$((f + 1))
	done
	pass=$((pass + p))
	fail=$((fail + f))
	secs=$(($(date +%s) - start))
	printf '%-34s %5d passed %4d failed  (%ss)\n' "$name" "$p" "$f" "$secs"
	[ "$f" -eq 0 ] || grep -E '^not ok ' "$out" | head -n 20 | sed 's/^/    /'
}
for t in "$build"/tests/test_*; do
	[ -x "$t" ] || continue
	n=$(basename "$t")
	case "$n" in *"$pattern"*) run_one "$n" "$t" ;; esac
done
for t in tests/*/t_*.sh; do
	[ -f "$t" ] || continue
	d=$(basename "$(dirname "$t")")
	case " ${EFIPT_TEST_DIRS:-$d} " in *" $d "*) ;; *) continue ;; esac
	n=$d/$(basename "$t" .sh)
	case "$n" in *"$pattern"*) run_one "$n" sh "$t" ;; esac
done
# The QEMU tests that exercise the plugins, again against QEMU 10.0 (plugin
# API 4) where make test set it up beside the system's QEMU (mk/qemu10.mk):
# its qemu-system-x86_64 first in PATH, its plugins in the environment.
q2=$build/qemu10
if [ -f "$q2/ready" ]; then
	case " ${EFIPT_TEST_DIRS:-qemu} " in *" qemu "*) q2_run=1 ;; *) q2_run="" ;; esac
	for t in t_qemu_plugin t_qemu_bad t_qemu_reset t_qemu_smp t_qemu_trace_opts t_qemu_guest \
		t_qemu_guest_bad t_qemu_guest_smp t_qemu_guest_toggle t_qemu_guest_ebs t_qemu_guest_filter \
		t_qemu_vectors t_qemu_cr3 t_trace_edk2 t_trace_qemu t_make_run t_edk2_qemu t_edk2_smp \
		t_qemu_smc t_qemu_loads t_qemu_irq_after_branch \
		t_qemu_irq_after_jcc t_qemu_exceptions; do
		n=qemu10/$t
		[ -n "$q2_run" ] || continue
		case "$n" in *"$pattern"*) ;; *) continue ;; esac
		run_one "$n" env PATH="$PWD/$q2/bin:$PATH" EFIPT_QEMU_PLUGIN="$PWD/$q2/efipt-qemu.so" \
			EFIPT_INSNLOG="$PWD/$q2/tests/insnlog.so" sh "tests/qemu/$t.sh"
	done
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
