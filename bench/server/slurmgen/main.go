// Command slurmgen does to Slurm what loadgen does to corral: it submits
// many short 1-GPU jobs with sbatch from concurrent clients, waits until
// none is pending or running, and reports submit latency and throughput.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

func main() {
	n := flag.Int("n", 2000, "jobs to submit")
	conc := flag.Int("c", 32, "concurrent clients")
	gres := flag.String("gres", "gpu:h100:1", "GPUs per job (sbatch --gres)")
	flag.Parse()
	if err := run(*n, *conc, *gres); err != nil {
		fmt.Fprintln(os.Stderr, "slurmgen:", err)
		os.Exit(1)
	}
}

func run(n, conc int, gres string) error {
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
				out, err := exec.Command("sbatch", "--parsable", "--gres="+gres, "--output=/dev/null",
					fmt.Sprintf("--job-name=load-%d", i), "--wrap=true").CombinedOutput()
				lat[i], ids[i] = time.Since(t), strings.TrimSpace(string(out))
				if err != nil {
					errs[i] = fmt.Errorf("%v: %s", err, out)
				}
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
			return fmt.Errorf("sbatch %d: %w", i, err)
		}
	}
	for {
		out, err := exec.Command("squeue", "-h", "-t", "PD,R,CG,CF", "-o", "%i").Output()
		if err != nil {
			return fmt.Errorf("squeue: %w", err)
		}
		if strings.TrimSpace(string(out)) == "" {
			break
		}
		if time.Since(begin) > 60*time.Minute {
			return fmt.Errorf("jobs still queued after an hour")
		}
		time.Sleep(500 * time.Millisecond)
	}
	total := time.Since(begin)
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	seen := map[string]bool{}
	dup := 0
	for _, id := range ids {
		if seen[id] {
			dup++
		}
		seen[id] = true
	}
	fmt.Printf("| jobs submitted | %d (%d concurrent sbatch) |\n", n, conc)
	fmt.Printf("| submit wall time | %s (%.0f submits/s) |\n", submitWall.Round(time.Millisecond), float64(n)/submitWall.Seconds())
	fmt.Printf("| submit latency p50 / p99 / max | %s / %s / %s |\n", pct(0.50).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond))
	fmt.Printf("| all done after | %s: %.1f jobs/s end to end |\n", total.Round(time.Millisecond), float64(n)/total.Seconds())
	fmt.Printf("| duplicate job IDs | %d |\n", dup)
	return nil
}
