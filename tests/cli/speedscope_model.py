#!/usr/bin/env python3
"""Import a trace event JSON file the way speedscope does, and check that
it sees the file's slices.

usage: speedscope_model.py TIMELINE.json

A model of speedscope's importer of the trace event format (speedscope's
src/import/trace-event.ts, read for its rules; written here): the file
is accepted only if every event has ph and every B/E/X event has ts; B,
E and X events are kept (others ignored) and split by pid/tid; on each
track ts is rebased to the first, begins and ends go into two queues
(each stably sorted by ts) taken in ts order, where at equal ts an end is
taken before a begin unless both have the same name; an end first looks
among the ends of the same ts for one whose key (the name, plus the args
as JSON when there are any) is the open frame's, then for one of its
name; an end whose name is not the open frame's is ignored ("Doing
nothing instead"), one on an empty stack too.

Prints "ok" when the import gives, on every track, exactly the slices the
file's B/E events nest into (name, depth, begin, end) and no warning;
else the first difference or warning. Exits 0 or 1.
"""
import json
import sys


def fail(msg):
    print("speedscope: " + msg)
    sys.exit(1)


def key_of(e):
    k = e.get("name") or "(unnamed)"
    if "args" in e:
        k += " " + json.dumps(e["args"], separators=(",", ":"))
    return k


def import_track(events):
    """speedscope's import of one pid/tid: (slices, warnings)."""
    first = min(e["ts"] for e in events)
    begins, ends = [], []
    for e in events:
        e = dict(e, ts=e["ts"] - first)
        (begins if e["ph"] == "B" else ends).append(e)
    begins.sort(key=lambda e: e["ts"])   # stable, as Array.sort is
    ends.sort(key=lambda e: e["ts"])
    stack, slices, warnings = [], [], []
    while begins or ends:
        if not ends:
            take = "B"
        elif not begins:
            take = "E"
        elif begins[0]["ts"] != ends[0]["ts"]:
            take = "B" if begins[0]["ts"] < ends[0]["ts"] else "E"
        else:
            take = "B" if begins[0].get("name") == ends[0].get("name") else "E"
        if take == "B":
            b = begins.pop(0)
            stack.append([b, len(stack), b["ts"]])
            continue
        if stack:
            top = stack[-1][0]
            swap = None
            for i in range(1, len(ends)):
                if ends[i]["ts"] > ends[0]["ts"]:
                    break
                if key_of(ends[i]) == key_of(top):
                    swap = i
                    break
            if swap is None:
                for i in range(1, len(ends)):
                    if ends[i]["ts"] > ends[0]["ts"]:
                        break
                    if ends[i].get("name") == top.get("name"):
                        swap = i
                        break
            if swap is not None:
                ends[0], ends[swap] = ends[swap], ends[0]
        e = ends.pop(0)
        if not stack:
            warnings.append("ts=%s: end of %r on an empty stack" % (e["ts"], key_of(e)))
            continue
        b, depth, ts = stack[-1]
        if e.get("name") != b.get("name"):
            warnings.append("ts=%s: end of %r while %r is open: ignored"
                            % (e["ts"], key_of(e), key_of(b)))
            continue
        stack.pop()
        slices.append((b.get("name"), depth, ts, e["ts"]))
    for b, depth, ts in stack:
        warnings.append("%r still open at the end" % key_of(b))
    return sorted(slices, key=lambda s: (s[2], s[1])), warnings


def file_slices(events):
    """The slices the file's B/E events nest into, in the file's order."""
    first = min(e["ts"] for e in events)
    stack, slices = [], []
    for e in events:
        if e["ph"] == "B":
            stack.append([e["name"], len(stack), e["ts"] - first])
        else:
            b = stack.pop()
            slices.append((b[0], b[1], b[2], e["ts"] - first))
    return sorted(slices, key=lambda s: (s[2], s[1]))


def main():
    with open(sys.argv[1], "rb") as f:
        doc = json.loads(f.read().decode("utf-8"))
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    if not isinstance(events, list) or not events:
        fail("not an event list")
    for e in events:
        if "ph" not in e or (e["ph"] in "BEX" and "ts" not in e):
            fail("rejected: an event without ph, or a B/E/X event without ts: %s" % e)
    tracks = {}
    for e in events:
        if e["ph"] in ("B", "E", "X"):
            if e["ph"] == "X":
                fail("X events are not modelled")
            tracks.setdefault((e["pid"], e["tid"]), []).append(e)
    if not tracks:
        fail("no B/E events: speedscope shows nothing")
    for track, evs in sorted(tracks.items()):
        got, warnings = import_track(evs)
        if warnings:
            fail("track %s: %d warnings, the first: %s" % (track, len(warnings), warnings[0]))
        want = file_slices(evs)
        if got != want:
            diff = [(a, b) for a, b in zip(want, got) if a != b][:1] or [(len(want), len(got))]
            fail("track %s: slices differ (file, speedscope): %s" % (track, diff))
    print("ok")


main()
