#!/usr/bin/env bash
# chase workload for the drop-in test harness: builds a few thousand
# symbolic links (chains up to 30 long through nested directories, relative
# and absolute, loops, dangling links) and has chase resolve them all, from
# the command line and from a list file, printing the results with the
# work directory's path replaced by WORK.
# Usage: workload.sh EMPTY_WORK_DIR   (chase found on PATH)
set -u
cd "$1" || exit 2
work=$(pwd -P)
export LC_ALL=C
filter() { sed "s#$work#WORK#g"; }

mkdir -p t
for i in $(seq 1 60); do
    echo "target $i" > "t/file$i"
    mkdir -p "ch/c$i"
    prev="../../t/file$i"
    len=$(( (i * 7) % 30 + 1 ))
    for j in $(seq 1 "$len"); do
        if [ $((j % 5)) -eq 0 ]; then
            mkdir -p "ch/c$i/d$j"
            ln -s "$work/ch/c$i/l$((j - 1))" "ch/c$i/d$j/abs"
            ln -s "d$j/abs" "ch/c$i/l$j"
        else
            ln -s "$prev" "ch/c$i/l$j"
        fi
        prev="l$j"
    done
done
# loops and dangling links
for i in $(seq 1 10); do
    ln -s "loopb$i" "t/loopa$i"
    ln -s "loopa$i" "t/loopb$i"
    ln -s "missing$i" "t/dangling$i"
done

find ch -type l -name 'l*' | sort > list.txt
for i in $(seq 1 10); do echo "t/loopa$i"; echo "t/dangling$i"; done >> list.txt
wc -l < list.txt

echo "== one chain, verbose"
chase --verbose ch/c17/l$(( (17 * 7) % 30 + 1 )) 2>&1 | filter
echo "exit ${PIPESTATUS[0]}"

echo "== from a list file (sorted links, then loops and dangling ones)"
chase -f list.txt > out.txt 2> err.txt
echo "exit $?"
filter < out.txt | cksum
filter < out.txt | sort | uniq -c | sort -k1,1nr -k2 | head -n 8
filter < err.txt | sort | head -n 4
wc -l < err.txt

echo "== NUL-separated list file, then all links on the command line"
find ch -type l -print0 | sort -z > list0.bin
chase -0 list0.bin 2>/dev/null | filter | cksum
echo "exit ${PIPESTATUS[0]}"
# shellcheck disable=SC2046 # the names have no spaces; split on purpose
chase $(find ch -type l | sort) 2>/dev/null | filter | cksum
echo "exit ${PIPESTATUS[0]}"

echo "== loop detection thresholds"
chase -w 3 -l 1000 ch/c40/l$(( (40 * 7) % 30 + 1 )) 2>&1 | filter | sort | uniq -c
chase -l 2 ch/c59/l$(( (59 * 7) % 30 + 1 )) 2>&1 | filter
echo "exit ${PIPESTATUS[0]}"
