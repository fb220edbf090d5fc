#!/usr/bin/env python3
"""Per-row marginals from two callgrind outputs of the same build (30k and 90k rows).

    perrow.py A.out B.out ROWS libs            instructions per row by library
    perrow.py A.out B.out ROWS symbols [N]     instructions per row by function, top N
    perrow.py A.out B.out ROWS calls NAME      calls per row into functions whose name contains NAME,
                                               by caller (e.g. swift_retain, swift_release)
ROWS is the difference in rows (60000 for 30k and 90k). Pipe through `swift demangle --simplified`.
"""
import collections, re, subprocess, sys


def self_costs(path):
    out = subprocess.run(["callgrind_annotate", "--threshold=100", "--inclusive=no", path],
                         capture_output=True, text=True, check=True).stdout
    costs = collections.Counter()
    for line in out.splitlines():
        # "  9,871,224 (12.3%)  file:function [/path/to/object]"
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+\S+?:(.*?)\s*\[(\S+)\]\s*$", line)
        if m:
            costs[(m.group(3).split("/")[-1], m.group(2))] += int(m.group(1).replace(",", ""))
    return costs


def calls_into(path, target):
    names, calls = {}, collections.Counter()
    caller = callee = None

    def name(token):
        m = re.match(r"\((\d+)\)(?:\s+(.*))?", token)
        if not m:
            return token
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), "?")

    for line in open(path, errors="replace"):
        if line.startswith("fn="):
            caller = name(line[3:].strip())
        elif line.startswith("cfn="):
            callee = name(line[4:].strip())
        elif line.startswith("calls=") and callee and target in callee:
            calls[caller] += int(line[6:].split()[0])
    return calls


def main():
    a, b, rows, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    if mode == "calls":
        before, after = calls_into(a, sys.argv[5]), calls_into(b, sys.argv[5])
        diff = {k: (after[k] - before[k]) / rows for k in set(before) | set(after)}
        print(f"calls per row: {sum(diff.values()):.2f}")
        for k, v in sorted(diff.items(), key=lambda kv: -kv[1])[:30]:
            print(f"{v:7.2f}  {k}")
        return
    before, after = self_costs(a), self_costs(b)
    diff = {k: (after[k] - before[k]) / rows for k in set(before) | set(after)}
    print(f"instructions per row: {sum(diff.values()):.0f}")
    if mode == "libs":
        libs = collections.Counter()
        for (obj, _), v in diff.items():
            libs[obj] += v
        for lib, v in libs.most_common(12):
            print(f"{v:8.0f}  {lib}")
    else:
        top = int(sys.argv[5]) if len(sys.argv) > 5 else 40
        for (obj, sym), v in sorted(diff.items(), key=lambda kv: -kv[1])[:top]:
            print(f"{v:8.0f}  {sym[:150]}  [{obj}]")


if __name__ == "__main__":
    main()
