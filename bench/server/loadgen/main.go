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
	"sort"
	"time"

	"github.com/corral-sched/corral/bench/server/burst"
	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
)

func main() {
	server := flag.String("server", os.Getenv("CORRAL_SERVER"), "server URL")
	token := flag.String("token", os.Getenv("CORRAL_TOKEN"), "admin token")
	n := flag.Int("n", 10000, "jobs to submit")
	conc := flag.Int("c", 32, "concurrent clients")
	gpus := flag.Int("gpus", 1, "GPUs per job")
	array := flag.Bool("array", false, "submit the n jobs as one job array (--array 0-(n-1)) in one call instead")
	flag.Parse()
	submit := submitJobs
	if *array {
		submit = submitArray
	}
	if err := run(*server, *token, *n, *conc, *gpus, submit); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

// submitter submits n jobs of gpus GPUs from conc clients and returns
// what it measured, with the ID of every job it made, and how to name
// the submission in the report.
type submitter func(ctx context.Context, c *client.Client, n, conc, gpus int) (burst.Result, string, error)

// submitJobs submits n jobs, one call each, from conc clients.
func submitJobs(ctx context.Context, c *client.Client, n, conc, gpus int) (burst.Result, string, error) {
	sent, err := burst.Run(n, conc, func(i int) (string, error) {
		j, err := c.Submit(ctx, api.JobRequest{Name: fmt.Sprintf("load-%d", i), GPUs: gpus, Command: []string{"true"}})
		return j.ID, err
	})
	return sent, fmt.Sprintf("%d (%d concurrent clients)", n, conc), err
}

// submitArray submits one job array of n tasks in one call; the IDs are
// its tasks', read back from the server.
func submitArray(ctx context.Context, c *client.Client, n, _, gpus int) (burst.Result, string, error) {
	sent, err := burst.Run(1, 1, func(int) (string, error) {
		j, err := c.Submit(ctx, api.JobRequest{Name: "load", GPUs: gpus, Command: []string{"true"}, Array: fmt.Sprintf("0-%d", n-1)})
		if err == nil && j.ArrayTasks != n {
			err = fmt.Errorf("the array made %d tasks, want %d", j.ArrayTasks, n)
		}
		return j.ArrayJob, err // the answer shows the array's first task
	})
	if err != nil {
		return sent, "", err
	}
	jobs, err := c.Jobs(ctx, nil)
	if err != nil {
		return sent, "", err
	}
	array := sent.IDs[0]
	sent.IDs = sent.IDs[:0]
	for _, j := range jobs {
		if j.ArrayJob == array {
			sent.IDs = append(sent.IDs, j.ID)
		}
	}
	return sent, fmt.Sprintf("%d as one job array (%s, one call)", n, array), nil
}

func run(server, token string, n, conc, gpus int, submit submitter) error {
	c := &client.Client{Server: server, Token: token}
	ctx := context.Background()
	begin := time.Now()
	sent, what, err := submit(ctx, c, n, conc, gpus)
	if err != nil {
		return fmt.Errorf("submit %w", err)
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
	report(what, sent, total, jobs, acct)
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

func report(what string, b burst.Result, total time.Duration, jobs []api.Job, acct api.Acct) {
	n, ids := len(b.IDs), b.IDs
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
	fmt.Printf("| jobs submitted | %s |\n", what)
	b.PrintSubmitRows(os.Stdout)
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
