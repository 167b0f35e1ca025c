# ovmf/mkesp.sh --add SRC:PATH takes the ESP path as README writes it
# (\EFI\tools\x.efi) or with slashes, and creates the directories on the way.
. tests/lib.sh
export MTOOLS_SKIP_CHECK=1
printf 'first\n' >"$TMP/a.txt"
printf 'second\n' >"$TMP/b.txt"
expect_rc "mkesp --add: backslash ESP path accepted" 0 sh ovmf/mkesp.sh --image "$TMP/esp.img" \
	--add "$TMP/a.txt:\\EFI\\tools\\deep\\a.txt" --add "$TMP/b.txt:EFI/other/b.txt"
mtype -i "$TMP/esp.img" ::/EFI/tools/deep/a.txt >"$TMP/got" 2>&1
contains "mkesp --add: backslash path lands in EFI/tools/deep" "$TMP/got" "first"
mtype -i "$TMP/esp.img" ::/EFI/other/b.txt >"$TMP/got" 2>&1
contains "mkesp --add: slash path still works" "$TMP/got" "second"
expect_rc "mkesp --dir --add: backslash ESP path accepted" 0 sh ovmf/mkesp.sh --dir "$TMP/tree" \
	--add "$TMP/a.txt:\\EFI\\tools\\a.txt"
expect "mkesp --dir --add: file in EFI/tools" cmp "$TMP/a.txt" "$TMP/tree/EFI/tools/a.txt"
expect_rc "mkesp --add: missing source refused" 2 sh ovmf/mkesp.sh --image "$TMP/esp2.img" --add "$TMP/nope:\\EFI\\tools\\x.efi"
contains "mkesp --add: missing source named, path as typed" "$TMP/err" "mkesp.sh: --add $TMP/nope:\\EFI\\tools\\x.efi: no file $TMP/nope"
expect_rc "mkesp --add: no ESP path refused" 2 sh ovmf/mkesp.sh --image "$TMP/esp2.img" --add "$TMP/a.txt"
