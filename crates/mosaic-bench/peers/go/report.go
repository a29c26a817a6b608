// Timing and the RESULT line of the Go peers. begin() is called just before
// the timed part (it snapshots the GC counters and starts a monotonic
// clock); report() prints TIME (ms since begin) and RESULT with the
// collections and stop-the-world pause time since begin (PauseTotalNs: sweep
// termination and mark termination; concurrent marking, assists and
// sweeping are not pauses and not counted), and percentiles of those pauses
// (of the last 256 at most: Go keeps no more).
package main

import (
	"fmt"
	"runtime"
	"sort"
	"time"
)

var (
	startTime  time.Time
	startStats runtime.MemStats
)

func begin() {
	runtime.ReadMemStats(&startStats)
	startTime = time.Now()
}

func report(check int64) {
	elapsed := time.Since(startTime)
	fmt.Printf("TIME %.3f\n", float64(elapsed.Nanoseconds())/1e6)
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	gcs := m.NumGC - startStats.NumGC
	n := int(gcs)
	if n > 256 {
		n = 256
	}
	// PauseNs is a circular buffer: the pause of GC number k (1-based) is at
	// (k+255)%256.
	p := make([]float64, n)
	for i := 0; i < n; i++ {
		k := m.NumGC - uint32(i)
		p[i] = float64(m.PauseNs[(k+255)%256]) / 1e3
	}
	sort.Float64s(p)
	fmt.Printf("RESULT {\"check\": %d, \"collections\": %d, \"gc_ms\": %.3f", check, gcs,
		float64(m.PauseTotalNs-startStats.PauseTotalNs)/1e6)
	if n > 0 {
		fmt.Printf(", \"pause_p50_us\": %.3f, \"pause_p99_us\": %.3f, \"pause_max_us\": %.3f", p[n/2], p[int(float64(n)*0.99)], p[n-1])
	}
	fmt.Println("}")
}
