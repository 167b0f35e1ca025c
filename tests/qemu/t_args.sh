# efipt.args as rigs write it: long annotated files, and files that cannot be
# a command line (too big, UTF-16, binary). A file efipt.efi cannot use is
# named with the reason in one line, and its --shutdown still powers off.
. tests/lib.sh
. tests/qemu/lib_qemu.sh
BOOT_TIMEOUT=40 # a rig left sitting in the firmware shows as a timeout

# args_esp NAME FILE: an ESP whose \EFI\BOOT\efipt.args is FILE, byte for byte
args_esp() {
	mkdir -p "$TMP/$1"
	sh ovmf/mkesp.sh --image "$TMP/$1/esp.img" --add "$2:EFI/BOOT/efipt.args" >/dev/null
}

# 1. 3 KB of comments around a short command line
{
	i=0
	while [ $i -lt 40 ]; do echo "# rig notes, line $i: what this nightly job checks and why ......"; i=$((i + 1)); done
	echo "caps --debugcon   # the command"
	echo "   --shutdown"
} >"$TMP/long.args"
args_esp long "$TMP/long.args"
boot_esp long
L=$TMP/long/debugcon.log
contains "long annotated efipt.args: used" "$L" "efipt.efi $(cat VERSION): caps (arguments from efipt.args)"
run=$(rundirs long | head -n 1)
expect "long annotated efipt.args: manifest has the command line without comments" python3 -c "
import json; m=json.load(open('$run/manifest.json'))
assert m['command_line']=='caps --debugcon --shutdown', m['command_line']"

# 2. too big: more than 64 KiB
{
	echo "caps --debugcon --shutdown"
	i=0
	while [ $i -lt 1100 ]; do echo "# padding padding padding padding padding padding padding pad"; i=$((i + 1)); done
} >"$TMP/big.args"
size=$(wc -c <"$TMP/big.args")
args_esp big "$TMP/big.args"
boot_esp big
contains "efipt.args over 64 KiB: named with its size" "$TMP/big/debugcon.log" "efipt: \\EFI\\BOOT\\efipt.args is $size bytes (at most 65536): not used"
contains "efipt.args over 64 KiB: EFI_BAD_BUFFER_SIZE" "$TMP/big/debugcon.log" "efipt: exit EFI_BAD_BUFFER_SIZE"
contains "efipt.args over 64 KiB: --shutdown honoured" "$TMP/big/debugcon.log" "efipt: powering off"
[ -z "$(rundirs big)" ] && ok "efipt.args over 64 KiB: no command run" || nok "efipt.args over 64 KiB: no command run" "a run directory appeared"

# 3. UTF-16 (as Windows Notepad's "Unicode" saves it)
printf 'caps --debugcon --shutdown\r\n' | iconv -f ASCII -t UTF-16 >"$TMP/u16.args"
[ "$(od -An -tx1 -N2 "$TMP/u16.args" | tr -d ' ')" = fffe ] || nok "UTF-16 efipt.args: test file" "iconv wrote no FF FE mark"
args_esp u16 "$TMP/u16.args"
boot_esp u16
contains "UTF-16 efipt.args: named" "$TMP/u16/debugcon.log" "efipt: \\EFI\\BOOT\\efipt.args is UTF-16 text (byte order mark FF FE): save it as ASCII text; not used"
contains "UTF-16 efipt.args: --shutdown honoured" "$TMP/u16/debugcon.log" "efipt: powering off"

# 4. binary, with the words a rig relies on inside
printf 'caps\000\001 --debugcon --shutdown # no newline at the end' >"$TMP/bin.args"
args_esp bin "$TMP/bin.args"
boot_esp bin
contains "binary efipt.args: first non-text byte named" "$TMP/bin/debugcon.log" "efipt: \\EFI\\BOOT\\efipt.args is not text (byte 0x00 at offset 4): not used"
contains "binary efipt.args: EFI_INVALID_PARAMETER" "$TMP/bin/debugcon.log" "efipt: exit EFI_INVALID_PARAMETER"
contains "binary efipt.args: --shutdown honoured" "$TMP/bin/debugcon.log" "efipt: powering off"

# 5. UTF-8 with a byte order mark: still text, the mark is skipped
printf '\357\273\277caps --debugcon --shutdown # \303\251t\303\251\n' >"$TMP/bom.args"
args_esp bom "$TMP/bom.args"
boot_esp bom
contains "UTF-8 efipt.args with a byte order mark: used, and said so" "$TMP/bom/debugcon.log" "caps (arguments from efipt.args, UTF-8 byte order mark skipped)"

# A UEFI Shell command line longer than efipt.efi takes: said so, and its
# --shutdown still powers the rig off (before: efipt.args was tried silently)
long=$(head -c 4200 /dev/zero | tr '\0' 'x')
printf 'fs0:\r\n\\efipt.efi caps --debugcon --shutdown %s\r\n' "$long" >"$TMP/startup.nsh"
mkdir -p "$TMP/shlong"
sh ovmf/mkesp.sh --image "$TMP/shlong/esp.img" --no-fallback --add "$TMP/startup.nsh:startup.nsh" >/dev/null
boot_esp shlong
contains "shell: too long a command line named" "$TMP/shlong/debugcon.log" \
	"efipt: the command line is longer than the 4095 characters efipt.efi takes"
