# efipt plan --cpuid FILE [trace options] [--format jsonl]: the MSR dry run.
. tests/lib.sh
P=tests/data/cpu-profiles
SKL=$P/skylake-s-core-i7-6700k.txt
ADL=$P/alder-lake-s-core-i9-12900k-p-core.txt
BDW=$P/broadwell-u-core-i7-5500u.txt
HV=$P/comet-lake-xeon-w-1290p-as-seen-under-a-hypervisor-negative-.txt

# check.py FILE [expect]: every line is a plan object (efipt plan --help) with exactly
# its keys in order; ToPA tables chain and end where OUTPUT_BASE starts;
# IA32_RTIT_STATUS is cleared before and IA32_RTIT_CTL written last.
cat >"$TMP/check.py" <<'PY'
import json, sys
hexs = lambda s: isinstance(s, str) and s.startswith("0x") and int(s, 16) >= 0

def check(path, want):
  objs = [json.loads(l) for l in open(path).read().splitlines()]
  if want == "refuse":
    assert len(objs) == 1 and list(objs[0]) == ["op", "reason"], objs
    assert objs[0]["op"] == "refuse" and objs[0]["reason"]
    return
  tables = {}
  for o in objs:
      op = o["op"]
      if op == "rdmsr":
          assert list(o) == ["op", "msr"] and hexs(o["msr"]), o
      elif op == "wrmsr":
          assert list(o) == ["op", "msr", "value"] and hexs(o["msr"]) and hexs(o["value"]), o
      elif op == "topa":
          assert list(o) == ["op", "table", "entries"] and hexs(o["table"]), o
          for e in o["entries"]:
              assert list(e) == ["base", "size", "end", "stop", "int"], e
              assert hexs(e["base"]) and isinstance(e["size"], int)
              assert all(isinstance(e[k], bool) for k in ("end", "stop", "int"))
              if not e["end"]:
                  assert e["size"] & (e["size"] - 1) == 0 and 4096 <= e["size"] <= 128 << 20, e
                  assert int(e["base"], 16) % e["size"] == 0, e
              else:
                  assert not e["stop"] and not e["int"], e
          assert o["entries"][-1]["end"] and not o["entries"][0]["end"], o
          tables[int(o["table"], 16)] = o["entries"]
      else:
          raise AssertionError(o)
  ops = [(o["op"], o.get("msr"), o.get("value")) for o in objs if o["op"] != "topa"]
  assert ops[0] == ("rdmsr", "0x570", None), ops
  assert ops[1] == ("wrmsr", "0x571", "0x0"), ops
  start = [i for i, o in enumerate(ops) if o[0] == "wrmsr" and o[1] == "0x570" and int(o[2], 16) & 1]
  assert len(start) == 1, ops
  ctl = int(ops[start[0]][2], 16)
  assert all(o[1] != "0x570" for o in ops[1:start[0]]), "RTIT_CTL is written last"
  stop = ops[start[0] + 1]
  assert stop[0] == "wrmsr" and stop[1] == "0x570" and int(stop[2], 16) == ctl & ~1, stop
  assert ops[-3:] == [("rdmsr", "0x560", None), ("rdmsr", "0x561", None), ("rdmsr", "0x571", None)]
  base = [int(o[2], 16) for o in ops if o[0] == "wrmsr" and o[1] == "0x560"][0]
  if ctl & (1 << 8):
      # follow the chain from OUTPUT_BASE: every table once, back to the start
      t, seen, total = base, [], 0
      while t not in seen:
          seen.append(t)
          ents = tables[t]
          total += sum(e["size"] for e in ents if not e["end"])
          if any(e["stop"] for e in ents):
              assert ents[-2]["stop"] and want in ("stop", "ok"), ents
          t = int(ents[-1]["base"], 16)
      assert t == base and sorted(seen) == sorted(tables), (hex(t), seen)
      print("topa", len(tables), total)
  else:
      assert not tables
      print("single", hex(base))

# check.py FILE [refuse] | check.py --many FILE=ok|refuse...
if sys.argv[1] == "--many":
    for a in sys.argv[2:]:
        f, w = a.rsplit("=", 1)
        try:
            check(f, w)
        except Exception as e:
            print("#", f, e)
            sys.exit(1)
else:
    check(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "ok")
PY

expect_rc "plan: Skylake default plan" 0 $EFIPT plan --cpuid $SKL --format jsonl
expect "plan: Skylake jsonl follows plan --help" python3 "$TMP/check.py" "$TMP/out"
python3 "$TMP/check.py" "$TMP/out" >"$TMP/summary" 2>&1
contains "plan: default is a 4 MiB ToPA buffer" "$TMP/summary" "topa 1 4194304"
contains "plan: stop mode sets STOP" "$TMP/out" '"stop":true'

expect_rc "plan: all Skylake options" 0 $EFIPT plan --cpuid $SKL --format jsonl --tsc --mtc=3 \
	--cyc --psb=8K --noretcomp --cr3 0x1000 --filter 0x1000-0x1fff --stop 0x40000 --size 300M --mode wrap
expect "plan: all-options jsonl valid" python3 "$TMP/check.py" "$TMP/out"
contains "plan: CR3_MATCH written" "$TMP/out" '{"op":"wrmsr","msr":"0x572","value":"0x1000"}'
contains "plan: ADDR1_A written" "$TMP/out" '{"op":"wrmsr","msr":"0x582","value":"0x40000"}'
contains "plan: RTIT_CTL value" "$TMP/out" '{"op":"wrmsr","msr":"0x570","value":"0x210200ef8f"}'
if grep -q '"stop":true' "$TMP/out"; then nok "plan: wrap mode has no STOP" "found"; else ok "plan: wrap mode has no STOP"; fi

expect_rc "plan: single-range on Skylake" 0 $EFIPT plan --cpuid $SKL --format jsonl --output single --size 1M
python3 "$TMP/check.py" "$TMP/out" >"$TMP/summary" 2>&1
contains "plan: single-range has no ToPA" "$TMP/summary" "single 0x"
contains "plan: single-range mask" "$TMP/out" '{"op":"wrmsr","msr":"0x561","value":"0xfffff"}'

expect_rc "plan: ADL037 falls back to ToPA" 0 $EFIPT plan --cpuid $ADL --format jsonl --output single --size 64K
contains "plan: erratum named on stderr" "$TMP/err" "TGL052/ADL037/RPL017"
expect "plan: ADL fallback jsonl valid" python3 "$TMP/check.py" "$TMP/out"

expect_rc "plan: Broadwell single-entry ToPA" 0 $EFIPT plan --cpuid $BDW --size 3M
contains "plan: Broadwell rounds to 4M" "$TMP/out" "size 4194304 STOP"
contains "plan: Broadwell END back to the table" "$TMP/out" "[1] END -> table 0x10000000"
expect_rc "plan: Broadwell --nobranch refused (BDM106)" 1 $EFIPT plan --cpuid $BDW --nobranch --format jsonl
expect "plan: refusal is one refuse object" python3 "$TMP/check.py" "$TMP/out" refuse
contains "plan: BDM106 named" "$TMP/out" "BDM106"

expect_rc "plan: unsupported feature refused" 1 $EFIPT plan --cpuid $SKL --pwr --format jsonl
contains "plan: refusal names the CPUID bit" "$TMP/out" '{"op":"refuse","reason":"power event trace (--pwr) not supported by this CPU: CPUID.(EAX=14H,ECX=0):EBX[5]=0"}'
expect_rc "plan: bad MTC period refused" 1 $EFIPT plan --cpuid $SKL --mtc=15
contains "plan: valid MTC periods listed" "$TMP/out" "valid --mtc=F values (CPUID.(EAX=14H,ECX=1):EAX[31:16]): 0 3 6 9"
expect_rc "plan: no PT refused" 1 $EFIPT plan --cpuid "$HV" --format jsonl
contains "plan: no PT reason" "$TMP/out" 'CPUID.(EAX=07H,ECX=0):EBX[25]=0'

# Every profile, default options: a valid plan or a single refusal.
bad=0 n=0 args=
for f in $P/*.txt; do
	n=$((n + 1))
	$EFIPT plan --cpuid "$f" --format jsonl --tsc >"$TMP/p$n.out" 2>/dev/null
	case $? in
	0) args="$args $TMP/p$n.out=ok" ;;
	1) args="$args $TMP/p$n.out=refuse" ;;
	*) bad=$((bad + 1)); echo "# $f: exit status not 0 or 1" ;;
	esac
done
# shellcheck disable=SC2086
python3 "$TMP/check.py" --many $args >"$TMP/many" 2>&1 || bad=$((bad + 1))
[ $bad -eq 0 ] && ok "plan: every profile gives a valid plan or refusal" || nok "plan: every profile gives a valid plan or refusal" "$(head -c 300 "$TMP/many")"

expect_rc "plan: text format" 0 $EFIPT plan --cpuid $SKL --tsc
contains "plan: text names MSRs" "$TMP/out" "IA32_RTIT_OUTPUT_MASK_PTRS"
contains "plan: text decodes RTIT_CTL" "$TMP/out" "TraceEn OS User ToPA TSCEn BranchEn"
expect_rc "plan: no --cpuid" 2 $EFIPT plan --tsc
expect_rc "plan: missing file" 2 $EFIPT plan --cpuid "$TMP/nope.txt"
expect_rc "plan: unknown option" 2 $EFIPT plan --cpuid $SKL --bogus
expect_rc "plan: bad option value" 2 $EFIPT plan --cpuid $SKL --output ring
contains "plan: bad value explained" "$TMP/err" "--output must be single or topa"
expect_rc "plan: image filter needs the firmware" 2 $EFIPT plan --cpuid $SKL --filter image=Shell.efi
expect_rc "plan: help" 0 $EFIPT plan --help
contains "plan: help lists trace options" "$TMP/out" "--mtc[=F]"

# a plan is printed whole or refused: 17000G on Granite Rapids is 267 tables
GNR=$P/granite-rapids-xeon-6-658x.txt
expect_rc "plan: 17000G ToPA" 0 $EFIPT plan --cpuid $GNR --size 17000G
n=$(grep -c '^topa ' "$TMP/out")
[ "$n" -eq 267 ] && ok "plan: 17000G prints all 267 tables" || nok "plan: 17000G prints all 267 tables" "$n tables"
contains "plan: 17000G starts tracing" "$TMP/out" "wrmsr  0x570 IA32_RTIT_CTL"
contains "plan: 17000G stops tracing" "$TMP/out" "rdmsr  0x571 IA32_RTIT_STATUS"
# beyond what a plan simulates: refused naming the limit, not rounded or swapped
expect_rc "plan: 131073G refused" 2 $EFIPT plan --cpuid $GNR --size 131073G
contains "plan: the limit named" "$TMP/err" "is more than efipt plan simulates: at most 128T"
# a dump claiming MAXPHYADDR 64: a size near 2^64 must not round to 0
sed 's/0x80000008 0x00: eax=0x00003934/0x80000008 0x00: eax=0x00003940/' $GNR >"$TMP/phys64.txt"
expect_rc "plan: size near 2^64 refused" 2 $EFIPT plan --cpuid "$TMP/phys64.txt" --size 18446744073709551615
if grep -q "to 0 bytes\|0 regions" "$TMP/out" "$TMP/err"; then nok "plan: size near 2^64 never rounds to 0" "$(head -c 300 "$TMP/out")"; else ok "plan: size near 2^64 never rounds to 0"; fi
# neither ToPA nor single-range: the CPU is blamed, not an option never given
sed 's/0x00000014 0x00: eax=0x00000001 ebx=0x0000005f ecx=0x00000007/0x00000014 0x00: eax=0x00000001 ebx=0x0000005f ecx=0x00000002/' $GNR >"$TMP/noout.txt"
expect_rc "plan: no output scheme refused" 1 $EFIPT plan --cpuid "$TMP/noout.txt"
contains "plan: no output scheme named" "$TMP/out" "neither ToPA (CPUID.(EAX=14H,ECX=0):ECX[0]=0) nor single-range output (CPUID.(EAX=14H,ECX=0):ECX[2]=0)"
if grep -q -- "--output single" "$TMP/out"; then nok "plan: --output single not blamed" "$(cat "$TMP/out")"; else ok "plan: --output single not blamed"; fi
# a leaf given twice in a dump: refused with its line
{ cat $SKL; grep ' 0x00000007 0x00:' $SKL | sed 's/ebx=0x[0-9a-f]*/ebx=0x00000000/'; } >"$TMP/dup.txt"
expect_rc "plan: duplicate CPUID leaf refused" 2 $EFIPT plan --cpuid "$TMP/dup.txt"
contains "plan: duplicate leaf line named" "$TMP/err" "dup.txt:$(wc -l <"$TMP/dup.txt"): this leaf and subleaf were already given"
# numbers: no sign, no blanks
expect_rc "plan: --cpu ' -5' refused" 2 $EFIPT plan --cpuid $SKL --cpu " -5"
# write errors
$EFIPT plan --cpuid $SKL >/dev/full 2>"$TMP/err"
rc=$?
[ "$rc" -eq 2 ] && ok "plan: /dev/full exits 2" || nok "plan: /dev/full exits 2" "exit $rc"
contains "plan: /dev/full named" "$TMP/err" "write error on standard output: No space left on device"
