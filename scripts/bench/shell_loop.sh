#!/bin/sh
# A shell script that runs many short programs, as build and CI scripts do:
# ROUNDS rounds of a small pipeline over the first lines of FILE (a different
# number of them each round). usage: shell_loop.sh ROUNDS FILE
rounds=${1:?rounds} file=${2:?file}
i=0
while [ "$i" -lt "$rounds" ]; do
	head -n $((i * 37 % 400 + 100)) "$file" | sort | uniq -c | sort -rn | head -n 2
	i=$((i + 1))
done
