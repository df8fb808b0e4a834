#!/usr/bin/env python3
"""The python3 benchmark workload: a JSON round trip.

Builds RECORDS nested records from a fixed seed, serialises them with json.dumps,
parses the text back with json.loads, serialises again and checks both texts are
equal. Run with PYTHONHASHSEED=0 so that every run allocates the same way.

usage: json_roundtrip.py RECORDS
"""
import json
import random
import sys


def main():
    records = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    rng = random.Random(42)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    data = []
    for i in range(records):
        data.append({
            "id": i,
            "name": "user%07d" % rng.randint(0, 10**7),
            "score": rng.random() * 1000,
            "tags": rng.sample(words, rng.randint(1, 5)),
            "active": rng.random() < 0.5,
            "history": [rng.randint(0, 10**6) for _ in range(rng.randint(0, 12))],
            "profile": {"city": rng.choice(words).title(), "zip": "%05d" % rng.randint(0, 99999),
                        "bio": " ".join(rng.choice(words) for _ in range(rng.randint(3, 15)))},
        })
    text = json.dumps(data)
    back = json.loads(text)
    again = json.dumps(back)
    if again != text:
        print("json round trip differs", file=sys.stderr)
        sys.exit(1)
    print("json records=%d bytes=%d" % (records, len(text)))


if __name__ == "__main__":
    main()
