// Command slurmreplay submits a workload to a running Slurm over
// compressed time, each job an sbatch of as many nodes as it has tasks
// with its GPUs per node as typed GRES, running `sleep` for its duration
// divided by the speedup; waits until the queue is empty; and writes the
// workload back as a jobs file with each job's start and end, read from
// Slurm's job completion log (JobCompType=jobcomp/filetxt). slurm.sh sets
// up Slurm and runs it.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/peers"
	"github.com/corral-sched/corral/internal/workload"
)

func main() {
	jobs := flag.Int("jobs", 150, "jobs of the synthetic workload (peers.Synthetic)")
	span := flag.Duration("span", 150*time.Minute, "simulated time the synthetic jobs arrive over")
	seed := flag.Uint64("seed", 1, "seed of the synthetic workload")
	speedup := flag.Float64("speedup", 30, "simulated seconds per real second")
	gpuType := flag.String("gres-type", "h100", "the GPU type of the nodes' GRES")
	jobcomp := flag.String("jobcomp", "", "Slurm's job completion log (JobCompLoc)")
	out := flag.String("out", "", "the jobs file to write")
	holds := flag.String("holds", "", "the holds file to write (each job's GPUs on each of its nodes, from start to end); empty: none")
	shares := flag.Bool("shares", false, "print each tenant's fair share (its share of the workload's GPU-hours, in thousandths) as 'tenant share' lines, and exit")
	qos := flag.Bool("qos", false, "submit each job in QOS p<priority> (which slurm.sh makes) instead of with its priority as a negative nice")
	flag.Parse()
	w := peers.Synthetic(*jobs, *span, *seed)
	if *shares {
		printShares(w)
		return
	}
	if err := run(w, *speedup, *gpuType, *jobcomp, *out, *holds, *qos); err != nil {
		fmt.Fprintln(os.Stderr, "slurmreplay:", err)
		os.Exit(1)
	}
}

// printShares prints each tenant's fair share, in name order.
func printShares(w workload.Workload) {
	shares := peers.TenantShares(w)
	for _, t := range slices.Sorted(maps.Keys(shares)) {
		fmt.Printf("%s %d\n", t, max(1, int(math.Round(1000*shares[t]))))
	}
}

func run(w workload.Workload, speedup float64, gpuType, jobcomp, out, holdsOut string, qos bool) error {
	t0 := time.Now()
	for _, a := range w.Arrivals {
		time.Sleep(time.Until(t0.Add(time.Duration(float64(a.At) / speedup))))
		if err := submit(a, speedup, gpuType, qos); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(time.Duration(float64(w.Horizon)/speedup) + 30*time.Minute)
	for {
		q, err := exec.Command("squeue", "-h", "-o", "%i").Output()
		if err != nil {
			return fmt.Errorf("squeue: %w", err)
		}
		if strings.TrimSpace(string(q)) == "" {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("jobs still queued at the deadline")
		}
		time.Sleep(time.Second)
	}
	times, err := readJobcomp(jobcomp)
	if err != nil {
		return err
	}
	res := &workload.Jobs{Workload: w, Outcomes: map[string]workload.Outcome{}}
	sim := func(t time.Time) time.Duration { return time.Duration(float64(t.Sub(t0)) * speedup).Round(time.Second) }
	var holds []peers.Hold
	for _, a := range w.Arrivals {
		r, ok := times[a.Job.Name]
		if !ok {
			continue
		}
		o := workload.Outcome{Start: max(sim(r.start), a.At), End: sim(r.end), Started: true, Ended: true}
		res.Outcomes[a.Job.Name] = o
		for i, node := range r.nodes {
			holds = append(holds, peers.Hold{Job: a.Job.Name, Task: fmt.Sprint(i), Node: node, GPUs: a.Job.Groups[0].Task.GPUs, From: o.Start, To: max(o.End, o.Start)})
		}
	}
	if holdsOut != "" {
		if err := peers.WriteHoldsFile(holdsOut, holds); err != nil {
			return err
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := workload.WriteJobs(f, &res.Workload, res.Outcomes); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// submit sbatches a: one task per node, its GPUs as typed GRES per node,
// its priority as its QOS (with qos) or as a negative nice (multifactor
// subtracts nice), a time limit of twice its compressed duration, in
// whole minutes as Slurm takes them.
func submit(a workload.Arrival, speedup float64, gpuType string, qos bool) error {
	d := a.Job.Groups[0].Task
	run := float64(a.Duration) / speedup / float64(time.Second)
	limit := max(1, int(math.Ceil(2*run/60)))
	args := []string{"--parsable", "--output=/dev/null", "--job-name=" + a.Job.Name, "--account=" + a.Job.Tenant,
		fmt.Sprintf("--nodes=%d", a.Job.Tasks()), "--ntasks-per-node=1",
		fmt.Sprintf("--cpus-per-task=%d", max(1, d.CPUMilli/1000)), fmt.Sprintf("--mem=%dM", max(1, d.MemoryMiB)),
		fmt.Sprintf("--time=%d", limit), fmt.Sprintf("--wrap=sleep %.3f", run)}
	if qos {
		args = append(args, fmt.Sprintf("--qos=p%d", a.Job.Priority))
	} else {
		args = append(args, fmt.Sprintf("--nice=%d", -1000*a.Job.Priority))
	}
	if d.GPUs > 0 {
		args = append(args, fmt.Sprintf("--gres=gpu:%s:%d", gpuType, d.GPUs))
	}
	if out, err := exec.Command("sbatch", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("sbatch %s: %v: %s", a.Job.Name, err, out)
	}
	return nil
}

// completion is one job's line of the job completion log.
type completion struct {
	start, end time.Time
	nodes      []string
}

// readJobcomp reads each job's start, end and nodes from a
// jobcomp/filetxt log: lines of key=value fields, Name, StartTime,
// EndTime and NodeList among them.
func readJobcomp(path string) (map[string]completion, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("job completion log: %w", err)
	}
	defer f.Close()
	out := map[string]completion{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		kv := map[string]string{}
		for field := range strings.FieldsSeq(sc.Text()) {
			k, v, _ := strings.Cut(field, "=")
			kv[k] = v
		}
		start, err1 := time.ParseInLocation("2006-01-02T15:04:05", kv["StartTime"], time.Local)
		end, err2 := time.ParseInLocation("2006-01-02T15:04:05", kv["EndTime"], time.Local)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s:%d: StartTime %q, EndTime %q: want times such as 2026-01-02T15:04:05", path, line, kv["StartTime"], kv["EndTime"])
		}
		nodes, err := expandHostlist(kv["NodeList"])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: NodeList: %w", path, line, err)
		}
		out[kv["Name"]] = completion{start: start, end: end, nodes: nodes}
	}
	return out, sc.Err()
}

// expandHostlist expands a Slurm host list such as n[0-2,5],m1 into its
// names; "(null)" and "" are no hosts.
func expandHostlist(s string) ([]string, error) {
	var out []string
	for s != "" && s != "(null)" {
		open, comma := strings.IndexByte(s, '['), strings.IndexByte(s, ',')
		if open < 0 || (comma >= 0 && comma < open) { // a plain name
			name, rest, _ := strings.Cut(s, ",")
			out, s = append(out, name), rest
			continue
		}
		end := strings.IndexByte(s[open:], ']')
		if end < 0 {
			return nil, fmt.Errorf("%q: an unclosed [", s)
		}
		prefix, ranges := s[:open], s[open+1:open+end]
		for r := range strings.SplitSeq(ranges, ",") {
			lo, hi, isRange := strings.Cut(r, "-")
			a, err1 := strconv.Atoi(lo)
			b, err2 := a, error(nil)
			if isRange {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 != nil || err2 != nil || b < a {
				return nil, fmt.Errorf("%q: range %q", s, r)
			}
			for i := a; i <= b; i++ {
				out = append(out, fmt.Sprintf("%s%0*d", prefix, len(lo), i))
			}
		}
		s = strings.TrimPrefix(s[open+end+1:], ",")
	}
	return out, nil
}
