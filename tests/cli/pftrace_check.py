#!/usr/bin/env python3
"""Check an efipt timeline in Perfetto's protobuf format against the JSON
timeline of the same trace, independently of efipt.

usage: pftrace_check.py TIMELINE.pftrace TIMELINE.json SCHEMA.proto

The protobuf is decoded by Debian's protoc (--decode=perfetto.protos.Trace
with SCHEMA, the subset of Perfetto's schema efipt writes) and checked:
no field outside the schema; the track descriptors and the file's
description on sequence 1, each thread track's events on a sequence of
its own (as the Perfetto SDK writes a thread's); each sequence's first
packet, and no other, clearing its incremental state, every TrackEvent
packet needing it; a thread track's sequence setting its defaults (its
track, clock 64) and a clock snapshot making clock 64 incremental from 0
where BOOTTIME is 0, each packet's time then that clock's value (the
sum of the deltas) or, with timestamp_clock_id 6, whole; every interned
name (event names, debug annotation names) defined once per sequence,
each string once there, before any use there; strings valid UTF-8;
tracks described once (the process, a thread track per CPU, counter
tracks under them); per track ts never goes back and slices nest. Then it must say what the
JSON says: the same tracks by name, on each the same slices (name, depth,
begin and end in ns: JSON ts in us * 1000), the same instants with the same
arguments, the same counter samples, and the file description equal to
otherData (whose slice count is the trace's: the firmware's FPDT tracks
are not counted). Prints "ok" or the first problem, exits 0 or 1.
"""
import decimal
import json
import os
import subprocess
import sys


def fail(msg):
    print("pftrace: " + msg)
    sys.exit(1)


def unquote(s, where):
    """A protoc text-format string literal (C escapes, octal bytes) as str."""
    assert s[0] == '"' and s[-1] == '"'
    out = bytearray()
    i, body = 0, s[1:-1]
    simple = {"n": 10, "r": 13, "t": 9, '"': 34, "'": 39, "\\": 92, "a": 7,
              "b": 8, "f": 12, "v": 11, "?": 63}
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        c = body[i + 1]
        if c in simple:
            out.append(simple[c])
            i += 2
        elif c in "01234567":
            j = i + 1
            while j < len(body) and j < i + 4 and body[j] in "01234567":
                j += 1
            out.append(int(body[i + 1:j], 8))
            i = j
        elif c == "x":
            j = i + 2
            while j < len(body) and j < i + 4 and body[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(body[i + 2:j], 16))
            i = j
        else:
            fail("%s: unknown escape \\%s" % (where, c))
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError as e:
        fail("%s: string is not UTF-8: %s" % (where, e))


def parse_text(text):
    """protoc's text format as nested dicts of lists."""
    root = {}
    stack = [root]
    for n, line in enumerate(text.split("\n"), 1):
        line = line.strip()
        if not line:
            continue
        where = "decoded line %d" % n
        if line == "}":
            stack.pop()
            if not stack:
                fail(where + ": unbalanced }")
            continue
        if line.endswith("{"):
            key = line[:-1].strip()
            child = {}
            stack[-1].setdefault(key, []).append(child)
            stack.append(child)
            continue
        key, _, value = line.partition(": ")
        if value.startswith('"'):
            v = unquote(value, where)
        elif value[:1].isdigit() or value[:1] == "-":
            v = int(value)
        else:
            v = value  # an enum name, true/false
        stack[-1].setdefault(key, []).append(v)
    if len(stack) != 1:
        fail("decoded text: unbalanced {")
    return root


def one(msg, key, default=None):
    v = msg.get(key)
    if not v:
        return default
    if len(v) != 1:
        fail("%s given %d times" % (key, len(v)))
    return v[0]


def unknown_fields(msg, path):
    for k, vals in msg.items():
        if k.isdigit():
            fail("field %s %s is not in the schema" % (path, k))
        for v in vals:
            if isinstance(v, dict):
                unknown_fields(v, path + "." + k)


def ns_of(ts):
    """JSON ts (us, a Decimal or int) as integer ns."""
    v = decimal.Decimal(ts) * 1000
    if v != v.to_integral_value():
        fail("JSON ts %s is not a whole ns" % ts)
    return int(v)


def json_view(path):
    with open(path, "rb") as f:
        doc = json.loads(f.read().decode("utf-8"), parse_float=decimal.Decimal)
    names = {}
    process = None
    for e in doc["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
        if e["ph"] == "M" and e["name"] == "process_name":
            process = e["args"]["name"]
    tracks, stacks, counters = {}, {}, {}
    for e in doc["traceEvents"]:
        ph = e["ph"]
        if ph == "M":
            continue
        track = names[(e["pid"], e["tid"])]
        t = tracks.setdefault(track, {"slices": [], "instants": []})
        st = stacks.setdefault(track, [])
        ts = ns_of(e["ts"])
        if ph == "B":
            st.append([e["name"], len(st), ts])
            t["slices"].append(st[-1])
        elif ph == "E":
            s = st.pop()
            if e.get("name") != s[0]:
                fail("JSON: E named %r ends %r" % (e.get("name"), s[0]))
            s.append(ts)
        elif ph == "i":
            args = {k: (v if not isinstance(v, decimal.Decimal) else str(v))
                    for k, v in e.get("args", {}).items()}
            t["instants"].append((ts, e["name"], args))
        elif ph == "C":
            for k, v in e["args"].items():
                counters.setdefault("%s %s" % (e["name"], k), []).append((ts, int(v)))
    other = {k: v for k, v in doc["otherData"].items()}
    for t in tracks.values():
        t["slices"] = [tuple(s) for s in t["slices"]]
    return process, tracks, counters, other


def proto_view(trace, schema):
    try:
        with open(trace, "rb") as f:
            r = subprocess.run(["protoc", "--decode=perfetto.protos.Trace",
                                "-I", os.path.dirname(schema) or ".", schema],
                               stdin=f, capture_output=True)
    except FileNotFoundError:
        fail("protoc not found (Debian package protobuf-compiler)")
    if r.returncode != 0 or r.stderr:
        fail("protoc --decode: exit %d: %s" % (r.returncode, r.stderr.decode()[:300]))
    root = parse_text(r.stdout.decode("ascii"))
    unknown_fields(root, "Trace")
    packets = root.get("packet", [])
    if not packets:
        fail("no packets")
    seqs = {}          # sequence id -> its state
    tracks = {}        # uuid -> ("process"|"thread"|"counter", name, parent)
    process = None
    per_track = {}     # uuid -> list of (ts, type, name, annotations, value)
    for n, p in enumerate(packets):
        where = "packet %d" % n
        sid = one(p, "trusted_packet_sequence_id")
        if not sid:
            fail(where + ": on no sequence")
        flags = one(p, "sequence_flags", 0)
        if sid not in seqs:
            if not flags & 1:
                fail(where + ": the first packet of sequence %d does not clear its state" % sid)
            seqs[sid] = {"names": {}, "keys": {}, "name_seen": set(), "key_seen": set(),
                         "track": None, "clock": None, "ts_clock": 6}
        elif flags & 1:
            fail(where + ": sequence %d cleared again" % sid)
        sq = seqs[sid]
        snap = one(p, "clock_snapshot")
        if snap:
            clocks = sorted((one(c, "clock_id"), one(c, "timestamp"),
                             one(c, "is_incremental", "false")) for c in snap["clocks"])
            if clocks != [(6, 0, "false"), (64, 0, "true")]:
                fail(where + ": clock snapshot %s, not clock 64 incremental from "
                     "BOOTTIME 0" % clocks)
            sq["clock"] = 0
        defaults = one(p, "trace_packet_defaults")
        if defaults:
            sq["ts_clock"] = one(defaults, "timestamp_clock_id", 6)
            ted = one(defaults, "track_event_defaults")
            sq["track"] = one(ted, "track_uuid") if ted else None
            if sid == 1:
                fail(where + ": defaults on sequence 1, the descriptors'")
        # the packet's time: clock 64 adds to the sequence's, BOOTTIME is whole
        ts = one(p, "timestamp")
        clock = one(p, "timestamp_clock_id", sq["ts_clock"])
        if clock == 64 and ts is not None:
            if sq["clock"] is None:
                fail(where + ": clock 64 without a snapshot on sequence %d" % sid)
            sq["clock"] += ts
            ts = sq["clock"]
        elif clock != 6:
            fail(where + ": timestamp on clock %s" % clock)
        interned = one(p, "interned_data")
        if interned:
            for field, table, seen in (("event_names", sq["names"], sq["name_seen"]),
                                       ("debug_annotation_names", sq["keys"],
                                        sq["key_seen"])):
                for e in interned.get(field, []):
                    iid, name = one(e, "iid"), one(e, "name")
                    if not iid or iid in table:
                        fail(where + ": %s iid %s defined again" % (field, iid))
                    if name in seen:
                        fail(where + ": %s %r interned twice" % (field, name))
                    table[iid] = name
                    seen.add(name)
        event_names, key_names = sq["names"], sq["keys"]
        td = one(p, "track_descriptor")
        if td:
            if sid != 1:
                fail(where + ": a track described on sequence %d, not 1" % sid)
            uuid = one(td, "uuid")
            if uuid in tracks:
                fail(where + ": track %s described twice" % uuid)
            if one(td, "process"):
                pd = one(td, "process")
                process = one(pd, "process_name")
                tracks[uuid] = ("process", process, None)
                if one(pd, "pid") != 1:
                    fail(where + ": process pid is not 1")
            elif one(td, "thread"):
                th = one(td, "thread")
                if one(th, "pid") != 1 or one(th, "tid") is None:
                    fail(where + ": thread track without pid 1 and a tid")
                tracks[uuid] = ("thread", one(th, "thread_name"), None)
            elif one(td, "counter") is not None:
                parent = one(td, "parent_uuid")
                if tracks.get(parent, ("",))[0] != "thread":
                    fail(where + ": counter track not under a thread track")
                tracks[uuid] = ("counter", one(td, "name"), parent)
            else:
                fail(where + ": a track that is no process, thread or counter")
        te = one(p, "track_event")
        if te:
            if not flags & 2:
                fail(where + ": a TrackEvent without SEQ_NEEDS_INCREMENTAL_STATE")
            if ts is None:
                fail(where + ": a TrackEvent without timestamp")
            uuid = one(te, "track_uuid", sq["track"])
            if uuid not in tracks:
                fail(where + ": track %s not described before" % uuid)
            owner = uuid if tracks[uuid][0] != "counter" else tracks[uuid][2]
            if sid != 1 and owner != sq["track"]:
                fail(where + ": an event of track %s on sequence %d, track %s's" %
                     (uuid, sid, sq["track"]))
            typ = one(te, "type")
            name = None
            if typ != "TYPE_SLICE_END" and typ != "TYPE_COUNTER":
                iid = one(te, "name_iid")
                if iid not in event_names:
                    fail(where + ": name iid %s not interned before" % iid)
                name = event_names[iid]
            ann = {}
            for a in te.get("debug_annotations", []):
                k = one(a, "name_iid")
                if k not in key_names:
                    fail(where + ": annotation name iid %s not interned before" % k)
                if one(a, "pointer_value") is not None:
                    v = "0x%x" % one(a, "pointer_value")
                elif one(a, "string_value") is not None:
                    v = one(a, "string_value")
                elif one(a, "bool_value") is not None:
                    v = one(a, "bool_value") == "true"
                else:
                    v = one(a, "uint_value")
                ann[key_names[k]] = v
            lst = per_track.setdefault(uuid, [])
            if lst and ts < lst[-1][0]:
                fail(where + ": ts %d goes back on track %s" % (ts, uuid))
            lst.append((ts, typ, name, ann, one(te, "counter_value")))
    out, counters, info = {}, {}, None
    for uuid, evs in per_track.items():
        kind, tname, parent = tracks[uuid]
        if kind == "counter":
            if any(e[1] != "TYPE_COUNTER" for e in evs):
                fail("counter track %s has other events" % tname)
            counters[tname] = [(e[0], e[4]) for e in evs]
            continue
        if kind == "process":
            if len(evs) != 1 or evs[0][2] != "efipt timeline" or evs[0][0] != 0:
                fail("the process track holds more than the file's description")
            info = evs[0][3]
            continue
        t = out.setdefault(tname, {"slices": [], "instants": []})
        st = []
        for ts, typ, name, ann, _ in evs:
            if typ == "TYPE_SLICE_BEGIN":
                st.append([name, len(st), ts])
                t["slices"].append(st[-1])
            elif typ == "TYPE_SLICE_END":
                if not st:
                    fail("track %s: an end without a begin" % tname)
                st.pop().append(ts)
            elif typ == "TYPE_INSTANT":
                t["instants"].append((ts, name, ann))
            else:
                fail("track %s: event %s" % (tname, typ))
        if st:
            fail("track %s: %d slices never end" % (tname, len(st)))
        t["slices"] = [tuple(s) for s in t["slices"]]
    if info is None:
        fail("no file description (the instant 'efipt timeline')")
    return process, out, counters, info


def main():
    if len(sys.argv) != 4:
        fail("usage: pftrace_check.py TIMELINE.pftrace TIMELINE.json SCHEMA.proto")
    pprocess, ptracks, pcounters, pinfo = proto_view(sys.argv[1], sys.argv[3])
    jprocess, jtracks, jcounters, jinfo = json_view(sys.argv[2])
    if pprocess != jprocess:
        fail("process %r, JSON's %r" % (pprocess, jprocess))
    # JSON tracks without events are only names: compare those with events
    if sorted(ptracks) != sorted(jtracks):
        fail("tracks %s, JSON's %s" % (sorted(ptracks), sorted(jtracks)))
    nslices = 0
    for name in sorted(jtracks):
        js, ps = jtracks[name]["slices"], ptracks[name]["slices"]
        for i, (a, b) in enumerate(zip(js, ps)):
            if a != b:
                fail("track %s slice %d: %s, JSON's %s" % (name, i, b, a))
        if len(js) != len(ps):
            fail("track %s: %d slices, JSON's %d" % (name, len(ps), len(js)))
        if not name.startswith("Firmware FPDT"):  # otherData counts the trace's
            nslices += len(js)
        ji, pi = jtracks[name]["instants"], ptracks[name]["instants"]
        if ji != pi:
            diff = [(a, b) for a, b in zip(ji, pi) if a != b][:1] or [(len(ji), len(pi))]
            fail("track %s instants differ: JSON, protobuf: %s" % (name, diff))
    if jcounters != pcounters:
        fail("counters %s, JSON's %s" % (sorted(pcounters), sorted(jcounters)))
    jtime, ptime = jinfo.pop("time", ""), pinfo.pop("time", "")
    if ("instruction index" in jtime) != ("instruction index" in ptime):
        fail("time %r, JSON's %r" % (ptime, jtime))
    if jinfo != pinfo:
        fail("description %s, JSON's otherData %s" % (pinfo, jinfo))
    if jinfo.get("slices") != nslices:
        fail("%d slices, otherData says %s" % (nslices, jinfo.get("slices")))
    print("ok")


main()
