#!/usr/bin/env python3
"""Writes the line-oriented input of a benchmark workload to stdout.

  json  LINES records, one JSON object a line: an id, a name of 1-8 words, 0-12
        tags and a float (the input of the jq workload);
  text  LINES lines of 1-16 words (the input of the perl workload).

The words come from one vocabulary, the same for every seed; which words a line
takes comes from --seed. So two seeds give two inputs of the same kind that share
no prefix: a recording made on one and a replay run on the other see the same
program on different data, as they would in use.

usage: gen_lines.py {json,text} LINES [--seed SEED]
"""
import argparse
import json
import random
import sys


def vocabulary():
    rng = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(2, 11)))
            for _ in range(4000)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=("json", "text"))
    ap.add_argument("lines", type=int)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    words = vocabulary()
    rng = random.Random(args.seed)
    out = sys.stdout
    for i in range(args.lines):
        if args.kind == "json":
            record = {
                "id": i,
                "name": " ".join(rng.choice(words) for _ in range(rng.randint(1, 8))),
                "tags": [rng.choice(words) for _ in range(rng.randint(0, 12))],
                "score": round(rng.uniform(0, 10000), 4),
            }
            out.write(json.dumps(record, separators=(",", ":")) + "\n")
        else:
            out.write(" ".join(rng.choice(words) for _ in range(rng.randint(1, 16))) + "\n")


if __name__ == "__main__":
    main()
