// binary-trees (Benchmarks Game). A leaf is a node with two nil children,
// allocated like every other node. usage: binarytrees N (timed in-process)
package main

import (
	"os"
	"strconv"
)

type Node struct{ l, r *Node }

func make_(d int) *Node {
	if d == 0 {
		return &Node{}
	}
	return &Node{make_(d - 1), make_(d - 1)}
}

func check(n *Node) int64 {
	if n.l == nil {
		return 1
	}
	return 1 + check(n.l) + check(n.r)
}

func main() {
	n := 10
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	min, max := 4, n
	if max < min+2 {
		max = min + 2
	}
	begin()
	total := check(make_(max + 1))
	ll := make_(max)
	for d := min; d <= max; d += 2 {
		for i := 0; i < 1<<(max-d+min); i++ {
			total += check(make_(d))
		}
	}
	total += check(ll)
	report(total)
}
