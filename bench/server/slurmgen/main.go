// Command slurmgen does to Slurm what loadgen does to corral: it submits
// many short 1-GPU jobs with sbatch from concurrent clients, waits until
// none is pending or running, and reports submit latency and throughput.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/corral-sched/corral/bench/server/burst"
)

func main() {
	n := flag.Int("n", 2000, "jobs to submit")
	conc := flag.Int("c", 32, "concurrent clients")
	gres := flag.String("gres", "gpu:h100:1", "GPUs per job (sbatch --gres)")
	array := flag.Bool("array", false, "submit the n jobs as one job array (sbatch --array=0-(n-1)) instead; slurm.conf's MaxArraySize must exceed n")
	flag.Parse()
	if err := run(*n, *conc, *gres, *array); err != nil {
		fmt.Fprintln(os.Stderr, "slurmgen:", err)
		os.Exit(1)
	}
}

func run(n, conc int, gres string, array bool) error {
	begin := time.Now()
	calls, what := n, fmt.Sprintf("%d (%d concurrent sbatch)", n, conc)
	if array {
		calls, conc, what = 1, 1, fmt.Sprintf("%d as one job array (sbatch --array=0-%d)", n, n-1)
	}
	sent, err := burst.Run(calls, conc, func(i int) (string, error) {
		args := []string{"--parsable", "--gres=" + gres, "--output=/dev/null", fmt.Sprintf("--job-name=load-%d", i), "--wrap=true"}
		if array {
			args = append(args, fmt.Sprintf("--array=0-%d", n-1))
		}
		out, err := exec.Command("sbatch", args...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("%v: %s", err, out)
		}
		return strings.TrimSpace(string(out)), nil
	})
	if err != nil {
		return fmt.Errorf("sbatch %w", err)
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
	seen := map[string]bool{}
	dup := 0
	for _, id := range sent.IDs {
		if seen[id] {
			dup++
		}
		seen[id] = true
	}
	fmt.Printf("| jobs submitted | %s |\n", what)
	sent.PrintSubmitRows(os.Stdout)
	fmt.Printf("| all done after | %s: %.1f jobs/s end to end |\n", total.Round(time.Millisecond), float64(n)/total.Seconds())
	fmt.Printf("| duplicate job IDs | %d |\n", dup)
	return nil
}
