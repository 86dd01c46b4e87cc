package packbench

import (
	"fmt"
	"sync"
	"time"
)

// Grid runs every spec on workers goroutines and returns the summaries in
// spec order. progress, when not nil, is called after each run with the
// number done so far; it is called from one goroutine at a time.
//
// Run and Summarise are pure; Grid reads the clock only to fill
// Summary.Seconds, which timing=false leaves at zero so that output is
// byte-identical between runs.
func Grid(specs []Spec, workers int, timing bool, progress func(done, total int)) ([]Summary, error) {
	out := make([]Summary, len(specs))
	errs := make([]error, len(specs))
	ForEach(len(specs), workers, func(i int) { out[i], errs[i] = runOne(specs[i], timing) }, progress)
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s/%s/seed %d: %w", specs[i].Trace, specs[i].Policy, specs[i].Seed, err)
		}
	}
	return out, nil
}

// ForEach calls do(i) for i in 0..n-1 on workers goroutines (at least one).
// progress, when not nil, is called after each call with the number done so
// far, from one goroutine at a time. do must write only to its own index.
func ForEach(n, workers int, do func(i int), progress func(done, total int)) {
	next := make(chan int)
	var mu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	for w := 0; w < max(workers, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				do(i)
				mu.Lock()
				done++
				if progress != nil {
					progress(done, n)
				}
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

func runOne(spec Spec, timing bool) (Summary, error) {
	start := time.Now()
	t, err := Run(spec)
	if err != nil {
		return Summary{}, err
	}
	s := Summarise(t)
	if timing {
		s.Seconds = time.Since(start).Seconds()
	}
	return s, nil
}
