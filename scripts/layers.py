#!/usr/bin/env python3
"""Checks that rxpath's layers only look down: every #include "..." of a
file under src/ or include/rxpath/ names a header of its own layer or of a
layer below it. Prints each include that looks up or sideways and exits 1
if there is one. The order (README, "Layout"):

    app -> bench -> ctl -> engine -> net -> fib, port -> core

fib and port stand side by side: neither includes the other.
"""
import os
import re
import sys

RANK = {"core": 0, "port": 1, "fib": 1, "net": 2, "engine": 3, "ctl": 4, "bench": 5, "app": 6}
# the public headers (include/rxpath/) and the layer each belongs to
PUBLIC = {
    "common.h": "core", "csum.h": "core", "proto.h": "core", "pkt.h": "core",
    "pool.h": "core", "ring.h": "core", "args.h": "core",
    "port.h": "port",
    "lpm4.h": "fib", "lpm6.h": "fib", "neigh.h": "fib", "router.h": "fib",
    "stack.h": "net",
}
# "x.h" and <rxpath/x.h> (the public headers may be named either way)
INCLUDE = re.compile(r'^\s*#\s*include\s+(?:"([^"]+)"|<(rxpath/[^>]+)>)', re.M)


def layer_of_header(name, here):
    """The layer an include names, seen from a file in layer @here."""
    if name.startswith("rxpath/"):
        return PUBLIC.get(name[len("rxpath/"):], "?")
    if "/" in name:
        return name.split("/", 1)[0]
    return here  # beside the including file


def main(root):
    bad = []
    files = []
    for layer in RANK:
        d = os.path.join(root, "src", layer)
        if os.path.isdir(d):
            files += [(layer, os.path.join(d, f)) for f in sorted(os.listdir(d)) if f.endswith((".c", ".h"))]
    for d in sorted(os.listdir(os.path.join(root, "src"))):
        if d not in RANK:
            bad.append(f"src/{d}/: a folder that is no layer (add it to scripts/layers.py)")
    inc = os.path.join(root, "include", "rxpath")
    for f in sorted(os.listdir(inc)):
        if f not in PUBLIC:
            bad.append(f"include/rxpath/{f}: a public header of no layer (add it to scripts/layers.py)")
        else:
            files.append((PUBLIC[f], os.path.join(inc, f)))
    for layer, path in files:
        text = open(path, encoding="utf-8").read()
        for m in INCLUDE.finditer(text):
            name = m.group(1) or m.group(2)
            target = layer_of_header(name, layer)
            rel = os.path.relpath(path, root)
            if target not in RANK:
                bad.append(f"{rel}: includes \"{name}\", a header of no known layer")
            elif target != layer and RANK[target] >= RANK[layer]:
                why = "beside it" if RANK[target] == RANK[layer] else "above it"
                bad.append(f"{rel} ({layer}): includes \"{name}\" of {target}, {why}")
    for b in bad:
        print(b)
    print(f"{len(files)} files checked: {len(bad)} include(s) against the layer order")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")))
