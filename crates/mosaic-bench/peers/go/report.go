// The RESULT line of the Go peers: the check value, collections, total
// pause time and pause percentiles (of the last 256 pauses Go keeps).
package main

import (
	"fmt"
	"runtime"
	"sort"
)

func report(check int64) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	n := int(m.NumGC)
	if n > 256 {
		n = 256
	}
	p := make([]float64, n)
	for i := 0; i < n; i++ {
		p[i] = float64(m.PauseNs[i]) / 1e3
	}
	sort.Float64s(p)
	fmt.Printf("RESULT {\"check\": %d, \"collections\": %d, \"gc_ms\": %.3f", check, m.NumGC, float64(m.PauseTotalNs)/1e6)
	if n > 0 {
		fmt.Printf(", \"pause_p50_us\": %.3f, \"pause_p99_us\": %.3f, \"pause_max_us\": %.3f", p[n/2], p[int(float64(n)*0.99)], p[n-1])
	}
	fmt.Println("}")
}
