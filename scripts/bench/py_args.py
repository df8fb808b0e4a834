#!/usr/bin/env python3
"""The python3 workload whose size is an argument: for each i below N, a dict
holding a string of i % 700 characters and a list of range(i % 300), serialised
with json.dumps; prints the sum of the texts' lengths. The objects of one turn die
before the next, so the program's memory does not grow with N: a plan recorded
with a small N serves a large one (memplan takes the plan of the nearest
arguments).

usage: py_args.py N
"""
import json
import sys


def main():
    n = int(sys.argv[1])
    total = 0
    for i in range(n):
        record = {"id": i, "text": "x" * (i % 700), "values": list(range(i % 300))}
        total += len(json.dumps(record))
    print("records=%d chars=%d" % (n, total))


if __name__ == "__main__":
    main()
