// Command loadgen submits many short jobs to a corral server from
// concurrent clients, waits for all of them to end, and reports submit
// latency, scheduling throughput, and whether any job was lost or
// duplicated.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
)

func main() {
	server := flag.String("server", os.Getenv("CORRAL_SERVER"), "server URL")
	token := flag.String("token", os.Getenv("CORRAL_TOKEN"), "admin token")
	n := flag.Int("n", 10000, "jobs to submit")
	conc := flag.Int("c", 32, "concurrent clients")
	gpus := flag.Int("gpus", 1, "GPUs per job")
	flag.Parse()
	if err := run(*server, *token, *n, *conc, *gpus); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run(server, token string, n, conc, gpus int) error {
	c := &client.Client{Server: server, Token: token}
	ctx := context.Background()
	lat := make([]time.Duration, n)
	ids := make([]string, n)
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
				j, err := c.Submit(ctx, api.JobRequest{Name: fmt.Sprintf("load-%d", i), GPUs: gpus, Command: []string{"true"}})
				lat[i], ids[i], errs[i] = time.Since(t), j.ID, err
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	submitWall := time.Since(begin)
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("submit %d: %w", i, err)
		}
	}
	if err := waitIdle(ctx, c); err != nil {
		return err
	}
	total := time.Since(begin)
	jobs, err := c.Jobs(ctx, nil)
	if err != nil {
		return err
	}
	acct, err := c.Acct(ctx, nil)
	if err != nil {
		return err
	}
	report(n, conc, lat, submitWall, total, ids, jobs, acct)
	return nil
}

// waitIdle polls until no job waits or runs.
func waitIdle(ctx context.Context, c *client.Client) error {
	q := url.Values{"state": {"pending", "preempted", "running"}}
	deadline := time.Now().Add(30 * time.Minute)
	for time.Now().Before(deadline) {
		left, err := c.Jobs(ctx, q)
		if err != nil {
			return err
		}
		if len(left) == 0 {
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("jobs still not done after 30 minutes")
}

func report(n, conc int, lat []time.Duration, submitWall, total time.Duration, ids []string, jobs []api.Job, acct api.Acct) {
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	var starts []time.Time
	states := map[string]int{}
	seen := map[string]int{}
	for _, j := range jobs {
		seen[j.ID]++
		states[j.State]++
		if j.Started != nil {
			starts = append(starts, *j.Started)
		}
	}
	sort.Slice(starts, func(a, b int) bool { return starts[a].Before(starts[b]) })
	missing, dup := 0, 0
	acked := map[string]bool{}
	for _, id := range ids {
		if acked[id] {
			dup++
		}
		acked[id] = true
		if seen[id] != 1 {
			missing++
		}
	}
	records := map[string]int{}
	for _, r := range acct.Records {
		records[r.Job]++
	}
	badRecords := 0
	for _, id := range ids {
		if records[id] != 1 {
			badRecords++
		}
	}
	span := starts[len(starts)-1].Sub(starts[0])
	fmt.Printf("| jobs submitted | %d (%d concurrent clients) |\n", n, conc)
	fmt.Printf("| submit wall time | %s (%.0f submits/s) |\n", submitWall.Round(time.Millisecond), float64(n)/submitWall.Seconds())
	fmt.Printf("| submit latency p50 / p99 / max | %s / %s / %s |\n", pct(0.50).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond))
	fmt.Printf("| jobs started | %d in %s: %.1f starts/s |\n", len(starts), span.Round(time.Millisecond), float64(len(starts)-1)/span.Seconds())
	fmt.Printf("| all done after | %s |\n", total.Round(time.Millisecond))
	fmt.Printf("| final states | %v |\n", states)
	fmt.Printf("| acknowledged but missing / duplicate IDs | %d / %d |\n", missing, dup)
	fmt.Printf("| jobs in store / accounting records not exactly one per job | %d / %d |\n", len(jobs), badRecords)
	if missing > 0 || dup > 0 || len(jobs) != n || badRecords > 0 || states["succeeded"] != n {
		fmt.Println("| CHECK | FAILED: jobs lost, duplicated or not all succeeded |")
		os.Exit(2)
	}
	fmt.Println("| check | nothing lost or duplicated; every job succeeded once |")
}
