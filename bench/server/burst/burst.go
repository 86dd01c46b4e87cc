package burst

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// Result is what one burst of submissions measured.
type Result struct {
	IDs     []string        // the job ID of each submission, in order
	Latency []time.Duration // every submission's latency, ascending
	Wall    time.Duration   // from the first submission to the last answer
}

// Run makes n submissions from conc goroutines; submit(i) makes the i-th
// and returns the new job's ID. Every submission is made; the error is the
// lowest-numbered one's, as "i: err".
func Run(n, conc int, submit func(i int) (string, error)) (Result, error) {
	r := Result{IDs: make([]string, n), Latency: make([]time.Duration, n)}
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	begin := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t := time.Now()
				r.IDs[i], errs[i] = submit(i)
				r.Latency[i] = time.Since(t)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	r.Wall = time.Since(begin)
	slices.Sort(r.Latency)
	for i, err := range errs {
		if err != nil {
			return r, fmt.Errorf("%d: %w", i, err)
		}
	}
	return r, nil
}

// Percentile is the latency below which a share p of the submissions fell.
func (r Result) Percentile(p float64) time.Duration {
	return r.Latency[min(len(r.Latency)-1, int(p*float64(len(r.Latency))))]
}

// PrintSubmitRows writes the report rows both load generators share: the
// burst's wall time and its latency percentiles.
func (r Result) PrintSubmitRows(w io.Writer) {
	n := len(r.Latency)
	fmt.Fprintf(w, "| submit wall time | %s (%.0f submits/s) |\n", r.Wall.Round(time.Millisecond), float64(n)/r.Wall.Seconds())
	fmt.Fprintf(w, "| submit latency p50 / p99 / max | %s / %s / %s |\n",
		r.Percentile(0.50).Round(time.Microsecond), r.Percentile(0.99).Round(time.Microsecond), r.Latency[n-1].Round(time.Microsecond))
}
