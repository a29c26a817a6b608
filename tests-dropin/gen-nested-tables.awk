# Writes a deterministic HTML page of a few MB to stdout: BLOCKS blocks of
# tables nested DEPTH deep (each level has some text rows around the cell
# that holds the next level) and, after them, one flat table of ROWS rows.
# Usage: awk -v BLOCKS=40 -v DEPTH=20 -v ROWS=20000 -f gen-nested-tables.awk
# Only integer arithmetic below 2^53 and a fixed linear congruential generator
# (MINSTD), so the output is the same byte for byte with any awk.
function rnd() { seed = (seed * 48271) % 2147483647; return seed }
function word(   n) {
    n = rnd() % nwords
    return words[n + 1]
}
function sentence(len,   s, i) {
    s = word()
    for (i = 1; i < len; i++) s = s " " word()
    return s
}
function nest(block, level,   i, pad) {
    pad = sprintf("%" level "s", "")
    printf "%s<table border=\"%d\" cellpadding=\"1\">\n", pad, level % 2
    printf "%s<tr><th colspan=\"2\">block %d level %d</th></tr>\n", pad, block, level
    for (i = 0; i < 2; i++)
        printf "%s<tr><td>%s</td><td align=\"right\">%d</td></tr>\n", pad, sentence(2 + rnd() % 5), rnd() % 100000
    if (level < DEPTH) {
        printf "%s<tr><td>%s</td><td>\n", pad, word()
        nest(block, level + 1)
        printf "%s</td></tr>\n", pad
    }
    printf "%s<tr><td colspan=\"2\">end of level %d: %s</td></tr>\n", pad, level, sentence(3)
    printf "%s</table>\n", pad
}
BEGIN {
    if (BLOCKS == "") BLOCKS = 40
    if (DEPTH == "") DEPTH = 20
    if (ROWS == "") ROWS = 20000
    seed = 20240601
    nwords = split("oak ash elm yew fir pine larch birch alder hazel rowan willow poplar lime beech maple cherry walnut holly juniper", words, " ")
    print "<!DOCTYPE html>"
    print "<html><head><title>Nested tables</title></head><body>"
    printf "<h1>%d blocks of tables nested %d deep, then %d rows</h1>\n", BLOCKS, DEPTH, ROWS
    for (b = 1; b <= BLOCKS; b++) {
        printf "<h2>Block %d</h2>\n", b
        nest(b, 1)
        printf "<p>%s &amp; %s &lt;%d&gt;</p>\n", sentence(8), sentence(4), b
    }
    print "<h2>Flat table</h2>"
    print "<table border=\"1\">"
    print "<tr><th>row</th><th>name</th><th>count</th><th>note</th><th>code</th></tr>"
    for (r = 1; r <= ROWS; r++)
        printf "<tr><td>%d</td><td>%s</td><td align=\"right\">%d</td><td>%s</td><td>%08x</td></tr>\n", r, word(), rnd() % 1000000, sentence(1 + rnd() % 6), rnd()
    print "</table>"
    print "</body></html>"
}
