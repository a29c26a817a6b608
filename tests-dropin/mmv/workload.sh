#!/usr/bin/env bash
# mmv workload for the drop-in test harness: renames, copies, overwrites
# and links a few thousand files by wildcard patterns, including a collision
# that mmv must refuse and rename cycles (swaps) it must resolve, then lists
# the result. Everything printed is deterministic (sorted listings, checksums).
# Usage: workload.sh EMPTY_WORK_DIR   (mmv found on PATH)
set -u
cd "$1" || exit 2
export LC_ALL=C

step() { echo "== $*"; }
run() { "$@" 2>&1; echo "exit $?"; }

for d in a b c d e; do
    mkdir -p "in/$d"
    for i in $(seq 1 400); do
        printf 'file %s/%03d\n' "$d" "$i" > "in/$d/IMG_$i.JPG"
    done
done

step "rename 2000 files, lower-casing the extension"
run mmv -v 'in/*/IMG_*.*' 'in/#1/photo-#2.#l3' | sort | tail -n 5

step "copy a's photos"
run mmv -c 'in/a/photo-*.jpg' 'in/a/copy-#1.jpg'

step "overwrite b's photos 1?? with those of c, keeping b's names"
run mmv -o -d 'in/c/photo-1??.jpg' 'in/b/photo-1#1#2.jpg'

step "hard links and symlinks for c"
run mmv -l 'in/c/photo-3*.jpg' 'in/c/hard-#1.jpg'
run mmv -s 'in/c/photo-2?.jpg' 'in/c/soft-#1.jpg'

step "collision: many sources onto one name must be refused"
run mmv -n 'in/d/photo-*.jpg' 'in/d/same.jpg' | tail -n 2 | cut -c 1-100

step "rename cycles (swap pairs of names) and upper-casing"
for i in $(seq 1 50); do
    echo "left $i" > "in/d/L$i-R$i.txt"
    echo "right $i" > "in/d/R$i-L$i.txt"
done
run mmv -v 'in/d/*-*.txt' 'in/d/#2-#1.txt' | sort | head -n 4
run mmv 'in/e/photo-*.jpg' 'in/e/#u1-PHOTO.JPG'

step "copy then delete (-x) everything from e up one level with a prefix"
run mmv -x 'in/e/*' 'e-#1'

step "listing"
find . | sort | cksum
find . -type f | sort | xargs cat | cksum
find . | wc -l
cat in/d/L7-R7.txt in/d/R7-L7.txt in/b/photo-123.jpg
