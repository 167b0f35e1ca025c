# efipt.efi snapshot under QEMU+OVMF: memory map, loaded images and code
# snapshots land in the run directory and match what was really in memory.
. tests/lib.sh
. tests/qemu/lib_qemu.sh
boot snapshot "snapshot --debugcon --shutdown"
contains "snapshot: exits EFI_SUCCESS" "$TMP/snapshot/debugcon.log" "efipt: exit EFI_SUCCESS"
run=$(rundirs snapshot | head -n 1)
expect_rc "snapshot: efipt info accepts the run (all file sizes match)" 0 $EFIPT info "$run"
expect "snapshot: every code region has its snapshot" python3 -c "
import json, os
m = json.load(open('$run/memmap.json'))['regions']
code = [r for r in m if r['type'] in ('LoaderCode', 'BootServicesCode', 'RuntimeServicesCode')]
assert len(code) > 10, len(code)
for r in code:
    f = '$run/' + r['snapshot']
    assert os.path.getsize(f) == r['pages'] * 4096, f"
expect "snapshot: images listed, firmware drivers named by FvFile GUID" python3 -c "
import json
im = json.load(open('$run/images.json'))['images']
assert len(im) > 50, len(im)
assert sum(i['path'].startswith('FvFile(') for i in im) > 40
assert any(i['path'] == '\\\\EFI\\\\BOOT\\\\BOOTX64.EFI' for i in im)"
# efipt.efi's own .text, as loaded, must be byte for byte the file's .text
expect "snapshot: efipt.efi's code in memory equals the file" python3 -c "
import json, struct
run = '$run'
im = [i for i in json.load(open(run + '/images.json'))['images'] if i['path'].endswith('BOOTX64.EFI')][0]
base = int(im['base'], 16)
regions = json.load(open(run + '/memmap.json'))['regions']
f = open('build/efipt.efi', 'rb').read()
pe = struct.unpack_from('<I', f, 0x3c)[0]
nsec = struct.unpack_from('<H', f, pe + 6)[0]
opt = struct.unpack_from('<H', f, pe + 20)[0]
sec = pe + 24 + opt
for i in range(nsec):
    name, vsize, va, rsize, raw = struct.unpack_from('<8sIIII', f, sec + 40 * i)
    if name.rstrip(b'\0') == b'.text':
        break
addr = base + va
reg = [r for r in regions if r.get('snapshot') and int(r['phys'], 16) <= addr < int(r['phys'], 16) + r['pages'] * 4096][0]
mem = open(run + '/' + reg['snapshot'], 'rb').read()
off = addr - int(reg['phys'], 16)
n = min(vsize, rsize)
assert mem[off:off + n] == f[raw:raw + n], 'text differs'
"
