# Perfetto's protobuf timeline against the JSON one (tests/cli/pftrace_check.py,
# with Debian's protoc and the schema subset tests/data/perfetto_trace.proto);
# sourced after tests/lib.sh.
# pf_same NAME JSON TIMELINE-ARGS...: efipt timeline TIMELINE-ARGS -o FILE.pftrace
# must say what JSON (the same timeline's JSON file) says. Leaves $TMP/pf.pftrace.
pf_same() {
	name=$1 json=$2
	shift 2
	rm -f "$TMP/pf.pftrace"
	$EFIPT timeline "$@" -o "$TMP/pf.pftrace" 2>"$TMP/pf.err"
	rc=$?
	if [ $rc -gt 1 ] || [ ! -s "$TMP/pf.pftrace" ]; then
		nok "$name" "exit $rc: $(head -c 300 "$TMP/pf.err")"
		return
	fi
	r=$(python3 tests/cli/pftrace_check.py "$TMP/pf.pftrace" "$json" tests/data/perfetto_trace.proto)
	if [ "$r" = ok ]; then ok "$name"; else nok "$name" "$r"; fi
}
