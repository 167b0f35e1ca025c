#!/usr/bin/env python3
"""Check an efipt timeline (trace event JSON) independently of efipt.

usage: timeline_check.py TIMELINE.json [--flame FOLDED] [--top CSV]
       [--max-depth N] [--min-dur N] [--from N] [--to N] [--tracks 0,1,..]

Checks: the file is JSON with traceEvents and otherData (which says what
time is: the instruction index, or the time since the first timing packet
with the TSC frequency and its source), no displayTimeUnit; every event
has its required fields (B: name; i: name, scope; C: name, numeric args;
M: args.name); per track ts never goes back; B/E strictly nested per track
(every E closes the track's open B, none left open); slices respect
--max-depth/--min-dur/--from/--to (instruction-index files only). With
--flame, the slice names are the frame names of efipt flame's folded
stacks; with --top (efipt top --format csv), each function's time in its
own slices minus its children's equals top's exclusive count (with time:
its excl_ns, within 2 ns per slice boundary). With --tracks 0,1,3, exactly
the tracks named "CPU 0", "CPU 1", "CPU 3" hold slices. Prints "ok" or the first
problem, exits 0 or 1.
"""
import csv
import json
import sys


def fail(msg):
    print("timeline: " + msg)
    sys.exit(1)


def main():
    args = sys.argv[1:]
    path = args.pop(0)
    opt = {}
    while args:
        k = args.pop(0)
        opt[k] = args.pop(0)
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read().decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        fail("not JSON: %s" % e)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("no traceEvents list")
    if "displayTimeUnit" in doc:
        fail("displayTimeUnit present")
    other = doc.get("otherData")
    if not isinstance(other, dict):
        fail("otherData does not say what ts is")
    timed = "since the first timing packet" in str(other.get("time", ""))
    if not timed and "instruction" not in str(other.get("time", "")):
        fail("otherData does not say what ts is")
    if timed and not (isinstance(other.get("tsc_hz"), int) and
                      isinstance(other.get("tsc_hz_source"), str) and
                      isinstance(other.get("emulated"), bool)):
        fail("otherData does not name the clock (tsc_hz, tsc_hz_source, emulated)")
    last = {}
    stack = {}
    named = set()
    names = set()
    self_time = {}
    bounds = {}       # slice boundaries per name (time: rounding)
    track_names = {}
    tracks_with_slices = set()
    max_depth = int(opt.get("--max-depth", 0))
    min_dur = int(opt.get("--min-dur", 1))
    lo = int(opt.get("--from", 0)) if not timed else 0
    hi = int(opt.get("--to", 1 << 62)) if not timed else 1 << 62
    if timed:
        min_dur = 0  # --min-dur counts instructions, not time
    for n, e in enumerate(doc["traceEvents"]):
        where = "event %d" % n
        if not isinstance(e, dict):
            fail(where + ": not an object")
        ph = e.get("ph")
        for k in ("pid", "tid"):
            if not isinstance(e.get(k), int):
                fail(where + ": no integer " + k)
        track = (e["pid"], e["tid"])
        if ph == "M":
            if e.get("name") == "thread_name":
                if not isinstance(e.get("args", {}).get("name"), str):
                    fail(where + ": thread_name without args.name")
                named.add(track)
                track_names[track] = e["args"]["name"]
            continue
        ts = e.get("ts")
        if not isinstance(ts, (int, float)):
            fail(where + ": no numeric ts")
        if ts < last.get(track, 0):
            fail(where + ": ts %s goes back (after %s)" % (ts, last[track]))
        last[track] = ts
        if not (lo <= ts <= hi):
            fail(where + ": ts %s outside [%d, %d]" % (ts, lo, hi))
        if track not in named:
            fail(where + ": track %s has no thread_name before it" % (track,))
        st = stack.setdefault(track, [])
        if ph == "B":
            if not isinstance(e.get("name"), str) or not e["name"]:
                fail(where + ": B without a name")
            st.append([e["name"], ts, 0, 0])
            tracks_with_slices.add(track)
            if max_depth and len(st) > max_depth:
                fail(where + ": depth %d past %d" % (len(st), max_depth))
            names.add(e["name"])
        elif ph == "E":
            if not st:
                fail(where + ": E without an open B")
            name, begin, children, nchildren = st.pop()
            if "name" in e and e["name"] != name:
                fail(where + ": E named %s closes %s" % (e["name"], name))
            dur = ts - begin
            if dur < min_dur:
                fail(where + ": slice %s of %s shorter than %d" % (name, dur, min_dur))
            self_time[name] = self_time.get(name, 0) + dur - children
            bounds[name] = bounds.get(name, 0) + 2 + 2 * nchildren
            if st:
                st[-1][2] += dur
                st[-1][3] += 1
        elif ph in ("i", "I"):
            if not isinstance(e.get("name"), str) or e.get("s", "t") not in "gpt":
                fail(where + ": instant without name or with a bad scope")
        elif ph == "C":
            a = e.get("args")
            if not isinstance(e.get("name"), str) or not isinstance(a, dict) or not a or \
               not all(isinstance(v, (int, float)) for v in a.values()):
                fail(where + ": counter without a name or numeric args")
        else:
            fail(where + ": unexpected ph %r" % ph)
    for track, st in stack.items():
        if st:
            fail("track %s: %d slices never end" % (track, len(st)))
    # nothing the trace made is lost on the way out: the CPUs' tracks
    # (tid under 100000; the firmware's FPDT records are past it) hold as
    # many slices and instants as otherData counted when they came
    cpu = [e for e in doc["traceEvents"] if e.get("tid", 0) < 100000]
    for key, ph in (("slices", ("B",)), ("instants", ("i", "I"))):
        n = sum(1 for e in cpu if e.get("ph") in ph)
        if isinstance(other.get(key), int) and n != other[key]:
            fail("%d %s written, otherData counted %d" % (n, key, other[key]))
    if "--flame" in opt:
        want = set()
        with open(opt["--flame"]) as f:
            for line in f:
                frames = line.rsplit(" ", 1)[0].split(";")
                want.update(x for x in frames if x != "[unknown caller]")
        if want != names:
            fail("names differ from flame's: only in the timeline %s, only in flame %s"
                 % (sorted(names - want)[:5], sorted(want - names)[:5]))
    if "--top" in opt:
        want = {}
        with open(opt["--top"]) as f:
            for row in csv.DictReader(f):
                name = row["image"] + "`" + row["function"] if row["image"] else row["function"]
                w = int(row["excl_ns"]) if timed else int(row["excl"])
                if w:
                    want[name] = want.get(name, 0) + w
        if timed:
            # us with ns precision: each boundary was rounded down to a ns
            got = {k: round(v * 1000) for k, v in self_time.items()}
            bad = [k for k in set(got) | set(want)
                   if abs(got.get(k, 0) - want.get(k, 0)) > bounds.get(k, 0)]
            if bad:
                fail("self time differs from top's excl_ns: %s"
                     % ["%s %s/%s" % (k, got.get(k), want.get(k)) for k in sorted(bad)[:5]])
            got = want
        else:
            got = {k: v for k, v in self_time.items() if v}
        if got != want:
            diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
            fail("self time differs from top's exclusive counts: %s"
                 % ["%s %s/%s" % (k, got.get(k), want.get(k)) for k in diff[:5]])
    if "--tracks" in opt:
        want = sorted("CPU %s" % c for c in opt["--tracks"].split(","))
        names_seen = sorted(track_names[t] for t in tracks_with_slices)
        if names_seen != want:
            fail("tracks with slices %s, wanted %s" % (names_seen, want))
    print("ok")


main()
