// binary-trees (Benchmarks Game). usage: binarytrees N
package main

import (
	"fmt"
	"os"
	"runtime"
	"sort"
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
	total := check(make_(max + 1))
	ll := make_(max)
	for d := min; d <= max; d += 2 {
		for i := 0; i < 1<<(max-d+min); i++ {
			total += check(make_(d))
		}
	}
	total += check(ll)
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	k := int(m.NumGC)
	if k > 256 {
		k = 256
	}
	p := make([]float64, k)
	for i := 0; i < k; i++ {
		p[i] = float64(m.PauseNs[i]) / 1e3
	}
	sort.Float64s(p)
	fmt.Printf("RESULT {\"check\": %d, \"collections\": %d, \"gc_ms\": %.3f", total, m.NumGC, float64(m.PauseTotalNs)/1e6)
	if k > 0 {
		fmt.Printf(", \"pause_p50_us\": %.3f, \"pause_p99_us\": %.3f, \"pause_max_us\": %.3f", p[k/2], p[int(float64(k)*0.99)], p[k-1])
	}
	fmt.Println("}")
}
