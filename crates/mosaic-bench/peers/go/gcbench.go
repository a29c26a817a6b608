// GCBench (Ellis, Kovac, Boehm), the same algorithm as the Mosaic and C
// versions.
// usage: gcbench HOLES THREADS [STRETCH LONG_LIVED ARRAY_SIZE MIN_DEPTH MAX_DEPTH]
// (defaults: the published 18 16 500000 4 16; heap limit: GOMEMLIMIT,
// GOGC=off). Timed from starting the goroutines to the last one finishing.
package main

import (
	"math/bits"
	"os"
	"strconv"
	"sync"
)

type Node struct {
	left, right *Node
	i, j        int32
}

var (
	stretch   = 18
	longLived = 16
	arraySize = 500000
	minDepth  = 4
	maxDepth  = 16
	holes     bool
)

func treeSize(d int) int64 { return (1 << (d + 1)) - 1 }
func numIters(d int) int64 { return 2 * treeSize(stretch) / treeSize(d) }

// sink holds the last hole: a plain field, read once at the end. The
// padding keeps two workers' rng and sink (written at every hole) off one
// cache line, as the other peers keep their per-thread state apart.
type worker struct {
	rng  uint64
	sink []byte
	_    [128]byte
}

func (w *worker) next() uint64 {
	x := w.rng
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	w.rng = x
	return x * 0x2545F4914F6CDD1D
}

func (w *worker) hole() {
	if !holes {
		return
	}
	k := bits.TrailingZeros64(w.next())
	if k > 7 {
		k = 7
	}
	base := uint64(16) << k
	w.sink = make([]byte, base+w.next()%base)
}

func (w *worker) populate(depth int, n *Node) {
	if depth <= 0 {
		return
	}
	n.left = &Node{}
	w.hole()
	n.right = &Node{}
	w.hole()
	w.populate(depth-1, n.left)
	w.populate(depth-1, n.right)
}

func (w *worker) makeTree(depth int) *Node {
	var n *Node
	if depth <= 0 {
		n = &Node{}
	} else {
		l, r := w.makeTree(depth-1), w.makeTree(depth-1)
		n = &Node{left: l, right: r}
	}
	w.hole()
	return n
}

func count(n *Node) int64 {
	if n == nil {
		return 0
	}
	return 1 + count(n.left) + count(n.right)
}

func (w *worker) run() int64 {
	w.makeTree(stretch)
	ll := &Node{}
	w.populate(longLived, ll)
	array := make([]float64, arraySize)
	for i := 0; i < arraySize/2; i++ {
		array[i] = 1.0 / float64(i)
	}
	var trees int64
	for d := minDepth; d <= maxDepth; d += 2 {
		iters := numIters(d)
		for i := int64(0); i < iters; i++ {
			w.populate(d, &Node{})
			trees++
		}
		for i := int64(0); i < iters; i++ {
			w.makeTree(d)
			trees++
		}
	}
	if array[1000] != 1.0/1000 {
		panic("array corrupted")
	}
	if holes && w.sink == nil {
		panic("no hole allocated")
	}
	return count(ll)*1000000 + trees
}

func main() {
	holes = len(os.Args) > 1 && os.Args[1] == "1"
	threads := 1
	if len(os.Args) > 2 {
		threads, _ = strconv.Atoi(os.Args[2])
	}
	if len(os.Args) > 7 {
		for i, p := range []*int{&stretch, &longLived, &arraySize, &minDepth, &maxDepth} {
			*p, _ = strconv.Atoi(os.Args[3+i])
		}
	}
	begin()
	checks := make([]int64, threads)
	var wg sync.WaitGroup
	for i := 0; i < threads; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			w := &worker{rng: uint64(42 + i)}
			checks[i] = w.run()
		}(i)
	}
	wg.Wait()
	for _, c := range checks {
		if c != checks[0] {
			panic("threads disagree")
		}
	}
	report(checks[0])
}
