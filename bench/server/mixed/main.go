// Command mixed submits the same stream of GPU jobs to corral server or to
// Slurm and measures what users feel: submit latency, time from submit to
// start, and GPUs left idle while work waits.
//
// The stream (fixed by -seed) mixes whole-GPU jobs (1, 2 or 4 GPUs),
// quarter-GPU jobs (corral: --share 0.25; Slurm without shards or MPS
// gives them a whole GPU) and gangs of 2 tasks of 2 GPUs (Slurm: one job
// of 4 GPUs). Each job records its own start and end in -dir, so both
// systems are timed the same way. Jobs arrive in waves (-waves of -n/waves
// jobs, -gap apart) to build queues.
//
//	mixed -target corral -server URL -token T -dir D
//	mixed -target slurm -dir D            (SLURM_CONF set)
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
	"github.com/corral-sched/corral/internal/server/client"
)

type jobSpec struct {
	kind  string  // whole, share, gang
	gpus  float64 // GPU amount it needs (share: 0.25)
	cards int     // GPUs Slurm gives it
	tasks int
	secs  float64
}

func stream(n int, seed uint64) []jobSpec {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]jobSpec, n)
	for i := range out {
		secs := 2 + 4*r.Float64()
		switch x := r.IntN(10); {
		case x < 5:
			g := []int{1, 2, 4}[r.IntN(3)]
			out[i] = jobSpec{kind: "whole", gpus: float64(g), cards: g, tasks: 1, secs: secs}
		case x < 8:
			out[i] = jobSpec{kind: "share", gpus: 0.25, cards: 1, tasks: 1, secs: secs}
		default:
			out[i] = jobSpec{kind: "gang", gpus: 4, cards: 4, tasks: 2, secs: secs}
		}
	}
	return out
}

func main() {
	target := flag.String("target", "corral", "corral or slurm")
	server := flag.String("server", os.Getenv("CORRAL_SERVER"), "corral server URL")
	token := flag.String("token", os.Getenv("CORRAL_TOKEN"), "corral token")
	dir := flag.String("dir", "", "directory the jobs write their start and end times to (shared with the jobs)")
	n := flag.Int("n", 120, "jobs")
	waves := flag.Int("waves", 4, "waves of arrivals")
	gap := flag.Duration("gap", 15*time.Second, "time between waves")
	gpus := flag.Int("gpus", 8, "GPUs of the machine")
	seed := flag.Uint64("seed", 7, "seed of the stream")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "mixed: -dir is required")
		os.Exit(2)
	}
	jobs := stream(*n, *seed)
	submit := submitter(*target, *server, *token)
	submitted := make([]time.Time, len(jobs))
	lat := make([]time.Duration, len(jobs))
	per := (len(jobs) + *waves - 1) / *waves
	for w := 0; w*per < len(jobs); w++ {
		if w > 0 {
			time.Sleep(*gap)
		}
		var wg sync.WaitGroup
		for i := w * per; i < min((w+1)*per, len(jobs)); i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				submitted[i] = time.Now()
				if err := submit(i, jobs[i], *dir); err != nil {
					fmt.Fprintf(os.Stderr, "mixed: job %d: %v\n", i, err)
					os.Exit(1)
				}
				lat[i] = time.Since(submitted[i])
			}()
		}
		wg.Wait()
	}
	starts, ends := waitAll(*dir, len(jobs), 10*time.Minute)
	report(*target, jobs, submitted, lat, starts, ends, *gpus)
}

// command is what every job runs: it stamps its start and end.
func command(i int, s jobSpec, dir string) string {
	f := filepath.Join(dir, strconv.Itoa(i))
	return fmt.Sprintf("date +%%s.%%N > %s.start.$$; sleep %.2f; date +%%s.%%N > %s.end.$$", f, s.secs, f)
}

func submitter(target, server, token string) func(int, jobSpec, string) error {
	if target == "slurm" {
		return func(i int, s jobSpec, dir string) error {
			args := []string{"--parsable", "-o", "/dev/null", "--gres=gpu:h100:" + strconv.Itoa(s.cards)}
			if s.kind == "gang" {
				// Two tasks of 2 GPUs on the one node: 4 GPUs, the script runs once.
				args = append(args, "--ntasks=2")
			}
			out, err := exec.Command("sbatch", append(args, "--wrap="+command(i, s, dir))...).CombinedOutput()
			if err != nil {
				return fmt.Errorf("sbatch: %v: %s", err, out)
			}
			return nil
		}
	}
	c := &client.Client{Server: server, Token: token}
	return func(i int, s jobSpec, dir string) error {
		req := api.JobRequest{Name: fmt.Sprintf("m%03d", i), Command: []string{"sh", "-c", command(i, s, dir)}, Tasks: s.tasks}
		switch s.kind {
		case "share":
			req.Share = 0.25
		case "gang":
			req.GPUs = 2
			req.Command = []string{"sh", "-c", "if [ \"$RANK\" = 0 ]; then " + command(i, s, dir) + "; else sleep " + fmt.Sprintf("%.2f", s.secs) + "; fi"}
		default:
			req.GPUs = int(s.gpus)
		}
		_, err := c.Submit(context.Background(), req)
		return err
	}
}

// waitAll waits until every job wrote its end, and reads the stamps.
func waitAll(dir string, n int, limit time.Duration) ([]time.Time, []time.Time) {
	deadline := time.Now().Add(limit)
	for {
		ends, _ := filepath.Glob(filepath.Join(dir, "*.end.*"))
		if len(ends) >= n || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	starts, ends := make([]time.Time, n), make([]time.Time, n)
	for i := range n {
		starts[i] = stamp(dir, i, "start")
		ends[i] = stamp(dir, i, "end")
	}
	return starts, ends
}

func stamp(dir string, i int, what string) time.Time {
	files, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("%d.%s.*", i, what)))
	if len(files) == 0 {
		return time.Time{}
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return time.Time{}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(string(data)), 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(0, int64(f*1e9))
}

func report(target string, jobs []jobSpec, submitted []time.Time, lat []time.Duration, starts, ends []time.Time, gpus int) {
	var waits []time.Duration
	missing := 0
	first, last := submitted[0], submitted[0]
	for i := range jobs {
		if starts[i].IsZero() || ends[i].IsZero() {
			missing++
			continue
		}
		waits = append(waits, starts[i].Sub(submitted[i]))
		last = maxTime(last, ends[i])
		first = minTime(first, submitted[i])
	}
	// GPUs idle while work waits: step through time in 50 ms slices; a
	// slice with a job submitted and not started counts the GPUs its
	// running jobs do not hold (a quarter-GPU job holds a quarter under
	// corral, a whole card under Slurm).
	idle := 0.0
	const step = 50 * time.Millisecond
	for t := first; t.Before(last); t = t.Add(step) {
		waiting, held := false, 0.0
		for i, s := range jobs {
			if starts[i].IsZero() {
				continue
			}
			if !submitted[i].After(t) && starts[i].After(t) {
				waiting = true
			}
			if !starts[i].After(t) && ends[i].After(t) {
				if target == "slurm" {
					held += float64(s.cards)
				} else {
					held += s.gpus
				}
			}
		}
		if waiting {
			idle += max(float64(gpus)-held, 0) * step.Seconds()
		}
	}
	slices.Sort(lat)
	slices.Sort(waits)
	q := func(d []time.Duration, p float64) time.Duration {
		if len(d) == 0 {
			return 0
		}
		return d[min(int(p*float64(len(d))), len(d)-1)]
	}
	mean := time.Duration(0)
	for _, w := range waits {
		mean += w
	}
	if len(waits) > 0 {
		mean /= time.Duration(len(waits))
	}
	fmt.Printf("| %s | submit p50 %v, p99 %v | wait mean %.1f s, p50 %.1f s, p99 %.1f s | makespan %.1f s | GPU-seconds idle while work waits %.0f | jobs not finished %d |\n",
		target, q(lat, 0.5).Round(time.Millisecond), q(lat, 0.99).Round(time.Millisecond), mean.Seconds(), q(waits, 0.5).Seconds(),
		q(waits, 0.99).Seconds(), last.Sub(first).Seconds(), idle, missing)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
