#!/bin/sh
# Seed corpus for fuzz_irqlog: interrupts.jsonl records as efipt-qemu.so
# writes them (qemu-plugin/idt.h), a timer's, an unknown vector's, another
# CPU's, out of order.
set -eu
out=$1
mkdir -p "$out"
printf '{"cpu": 0, "insn": 38791, "ip": "0x1f06d2dd", "handler": "0x1f059980", "vector": 32, "timer": true}\n' >"$out/timer"
printf '{"cpu": 0, "insn": 5, "ip": "0x1000", "handler": "0x2000", "vector": null, "why": "no LIDT seen"}\n{"cpu": 1, "insn": 2, "ip": "0x10", "handler": "0x20", "vector": 14}\n{"cpu": 0, "insn": 1, "ip": "0x1", "handler": "0x2", "vector": 48, "timer": false}\n' >"$out/mixed"
printf '{"cpu": 4095, "insn": 0, "ip": "0xffffffffffffffff", "handler": "0x0", "vector": 255}\n{"cpu": 0, "insn": 9223372036854775807, "ip": "0x1", "handler": "0x2", "vector": 0, "timer": true}' >"$out/edges"
