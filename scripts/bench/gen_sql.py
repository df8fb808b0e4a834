#!/usr/bin/env python3
"""Writes the SQL script of a sqlite3 benchmark workload to stdout.

By default, a table of ROWS rows inserted in one transaction, an index, and a few
group-by queries: the shape of a small analytics job.

With --stream, a table fed by ROWS single inserts of random text, with, after every
50 of them, a group-by query and a delete of all but the newest 500 rows: the
shape of a service that keeps a window of recent events. Its memory stays the same
however many rows go through, so a recording of a short stream serves a long one.

The rows come from a fixed seed (--seed), so every run (recording, replay, each
allocator) executes the same statements; two seeds give two different scripts.

usage: gen_sql.py [--stream] [--seed SEED] ROWS
"""
import argparse
import random
import sys


def random_text(rng, lo, hi):
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(rng.randint(lo, hi)))


def stream(rows, rng, out):
    out.write("create table events(id integer primary key, kind text, body text, n integer);\n")
    for i in range(1, rows + 1):
        out.write("insert into events(kind, body, n) values('kind%02d','%s',%d);\n" % (
            rng.randint(0, 40), random_text(rng, 8, 120), rng.randint(1, 1000)))
        if i % 50 == 0:
            out.write("select kind, count(*), sum(n), max(length(body)) from events"
                      " group by kind order by 2 desc, 1 limit 3;\n")
            out.write("delete from events where id <= %d;\n" % (i - 500))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stream", action="store_true")
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("rows", type=int, nargs="?", default=200000)
    args = ap.parse_args()
    rows = args.rows
    rng = random.Random(args.seed)
    out = sys.stdout
    if args.stream:
        stream(rows, rng, out)
        return
    cities = ["city%03d" % i for i in range(250)]
    out.write("create table orders(id integer primary key, customer text, city text,"
              " amount real, qty integer, note text);\n")
    out.write("begin;\n")
    for i in range(rows):
        note = random_text(rng, 8, 60)
        out.write("insert into orders values(%d,'cust%06d','%s',%.2f,%d,'%s');\n" % (
            i, rng.randint(0, 50000), rng.choice(cities), rng.uniform(1, 500),
            rng.randint(1, 20), note))
    out.write("commit;\n")
    out.write("create index orders_city on orders(city, amount);\n")
    out.write("select city, count(*), round(sum(amount), 2) from orders group by city"
              " order by 3 desc limit 5;\n")
    out.write("select customer, sum(qty) as q from orders group by customer order by q desc"
              " limit 5;\n")
    out.write("select qty, round(avg(amount), 3), max(length(note)) from orders group by qty;\n")
    out.write("select count(distinct customer) from orders where amount > 250;\n")


if __name__ == "__main__":
    main()
