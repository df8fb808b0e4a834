#!/usr/bin/env python3
"""Writes the SQL script of the sqlite3 benchmark workload to stdout.

A table of ROWS rows inserted in one transaction, an index, and a few group-by
queries: the shape of a small analytics job. The rows come from a fixed seed so
every run (recording, replay, each allocator) executes the same statements.

usage: gen_sql.py ROWS
"""
import random
import sys


def main():
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    rng = random.Random(20261129)
    cities = ["city%03d" % i for i in range(250)]
    out = sys.stdout
    out.write("create table orders(id integer primary key, customer text, city text,"
              " amount real, qty integer, note text);\n")
    out.write("begin;\n")
    for i in range(rows):
        note = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(rng.randint(8, 60)))
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
