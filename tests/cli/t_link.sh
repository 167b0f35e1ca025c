# What efipt links: libipt is for the tests and benchmarks that compare
# against it, never a dependency of the product.
. tests/lib.sh
if ! readelf -d "$EFIPT" >"$TMP/dyn" 2>"$TMP/err"; then
	nok "efipt: dynamic section" "$(head -c 300 "$TMP/err")"
	exit 0
fi
contains "efipt: readelf lists its libraries" "$TMP/dyn" "(NEEDED)"
if grep -q 'NEEDED.*libipt' "$TMP/dyn"; then
	nok "efipt does not need libipt" "$(grep NEEDED "$TMP/dyn" | tr '\n' ' ')"
else
	ok "efipt does not need libipt"
fi
