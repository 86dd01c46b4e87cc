// Command gangs-bench replays one workload where large gangs hurt
// (peers.BigGangs: gangs of 64 to 512 GPUs among small pods, on racks of
// NVL72-like nodes) on a real control plane whose nodes are fake
// (internal/peers), under each scheduler named, each on a fresh control
// plane, and reports gang waits, idle GPUs and gangs split across racks.
// run.sh runs it; RESULTS.md holds its numbers.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/corral-sched/corral/internal/peers"
	"github.com/corral-sched/corral/internal/workload"
)

type options struct {
	blocks, racks, gangs, small int
	span                        time.Duration
	seed                        uint64
	speedup                     float64
	out                         string
	schedulers                  []string
	reuse                       bool
}

func main() {
	var o options
	var schedulers string
	flag.IntVar(&o.blocks, "blocks", 2, "blocks of the fleet")
	flag.IntVar(&o.racks, "racks", 8, "racks per block, each 18 nodes of 4 GPUs (an NVL72 domain)")
	flag.IntVar(&o.gangs, "gangs", 12, "gangs of 64 to 512 GPUs")
	flag.IntVar(&o.small, "small", 1600, "single pods of 1, 2 or 4 GPUs")
	flag.DurationVar(&o.span, "span", 180*time.Minute, "simulated time the jobs arrive over")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the workload")
	flag.Float64Var(&o.speedup, "speedup", 60, "simulated seconds per real second")
	flag.StringVar(&o.out, "out", "bench/peers/gangs", "directory for each replay's jobs and holds files and results.json")
	flag.StringVar(&schedulers, "schedulers", strings.Join([]string{peers.KubeGang, peers.KueueTAS, peers.Corral, peers.CorralNoReserve}, ","),
		"schedulers to replay under, in order, of "+strings.Join(peers.GangSchedulers(), ", "))
	flag.BoolVar(&o.reuse, "reuse", false, "read each replay's files from an earlier run instead of replaying")
	flag.Parse()
	o.schedulers = strings.Split(schedulers, ",")
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gangs-bench:", err)
		os.Exit(1)
	}
}

// row is one scheduler's replay.
type row struct {
	System string                `json:"system"`
	Stats  peers.GangStats       `json:"stats"`
	Gangs  []peers.GangPlacement `json:"gangs"`
}

func run(o options, stdout io.Writer) error {
	f := peers.NVL72(o.blocks, o.racks)
	w := peers.BigGangs(f, o.gangs, o.small, o.span, o.seed)
	label := fmt.Sprintf("peers.BigGangs(%d gangs, %d small pods over %v, seed %d)", o.gangs, o.small, o.span, o.seed)
	fmt.Fprintf(stdout, "# %s: %d jobs, offered load %.2f; %d nodes of 4 GPUs in %d blocks of %d racks of 18; %g simulated seconds per second\n",
		label, len(w.Arrivals), peers.OfferedLoad(w, f), f.Nodes, o.blocks, o.racks, o.speedup)
	var rows []row
	for _, s := range o.schedulers {
		res, err := replay(o, f, w, s, stdout)
		if err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
		rows = append(rows, row{System: s, Stats: peers.MeasureGangs(w, res, f), Gangs: peers.Gangs(w, res, f)})
	}
	writeTable(stdout, rows)
	writeGangs(stdout, rows)
	data, err := json.MarshalIndent(map[string]any{"workload": label, "jobs": len(w.Arrivals), "nodes": f.Nodes,
		"offered_load": peers.OfferedLoad(w, f), "speedup": o.speedup, "rows": rows}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(o.out, "results.json"), append(data, '\n'), 0o644)
}

// replay runs w under s on a fresh control plane and writes what it saw
// (jobs-<s>.csv, holds-<s>.csv); with -reuse it reads those files.
func replay(o options, f peers.Fleet, w workload.Workload, s string, stdout io.Writer) (*peers.Result, error) {
	jobsPath := filepath.Join(o.out, "jobs-"+s+".csv")
	holdsPath := filepath.Join(o.out, "holds-"+s+".csv")
	if o.reuse {
		j, err := workload.ReadJobsFile(jobsPath)
		if err != nil {
			return nil, err
		}
		holds, err := peers.ReadHoldsFile(holdsPath)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return &peers.Result{Jobs: j, Holds: holds}, nil
	}
	dir, err := os.MkdirTemp("", "corral-gangs-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	start := time.Now()
	ctx := context.Background()
	rig, err := peers.Start(ctx, dir, f)
	if err != nil {
		return nil, err
	}
	defer rig.Stop()
	res, err := rig.Replay(ctx, w, peers.Options{Scheduler: s, Speedup: o.speedup, GPUs: f.Nodes * f.GPUs, Dir: dir, PodGroups: true})
	if err != nil {
		return nil, err
	}
	if err := rig.DeployedErr(); err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "# %s: replayed in %.0f s\n", s, time.Since(start).Seconds())
	if err := workload.WriteJobsFile(jobsPath, res.Jobs); err != nil {
		return nil, err
	}
	return res, peers.WriteHoldsFile(holdsPath, res.Holds)
}

func writeTable(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "system\tgangs started\tgang wait p50\tgang wait p99\tsmall started\tsmall wait p50\tsmall wait p99\tGPUs idle\tsibling wait\tracks over\tblocks over\tlast end\t")
	for _, r := range rows {
		s := r.Stats
		fmt.Fprintf(tw, "%s\t%d/%d\t%.1fm\t%.1fm\t%d/%d\t%.1fm\t%.1fm\t%.1f%%\t%.0f\t%d\t%d\t%.0fm\t\n", r.System, s.GangsStarted, s.Gangs,
			s.GangWaitP50M, s.GangWaitP99M, s.SmallStarted, s.Small, s.SmallWaitP50M, s.SmallWaitP99M, s.IdlePct, s.SiblingGPUMin,
			s.RacksOver, s.BlocksOver, s.LastEndM)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nwaits in simulated minutes, of the jobs each replay started; GPUs idle: mean share of the fleet no task held")
	fmt.Fprintln(w, "while jobs arrived; sibling wait: GPU-minutes a gang's tasks held before its last was bound; racks over: gangs")
	fmt.Fprintln(w, "started on more racks than their GPUs need; blocks over: gangs started across blocks; last end: the last job's end.")
}

// writeGangs prints each gang's wait and racks under each system.
func writeGangs(w io.Writer, rows []row) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nEach gang: its wait in simulated minutes, when one domain of its level first had nodes free of other jobs")
	fmt.Fprintln(w, "for all its tasks (room), and the racks it started on (its GPUs' fewest in brackets):")
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "gang\tGPUs\tpacked in\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t", r.System)
	}
	fmt.Fprintln(tw)
	for i, g := range rows[0].Gangs {
		fmt.Fprintf(tw, "%s\t%d\t%s\t", g.Name, g.GPUs, g.Level)
		for _, r := range rows {
			p := r.Gangs[i]
			if !p.Started {
				fmt.Fprint(tw, "not started\t")
				continue
			}
			room := "?"
			if p.HasRoom {
				room = fmt.Sprintf("%.0fm", p.Room.Minutes())
			}
			fmt.Fprintf(tw, "%.1fm, room %s, %d racks (%d)\t", p.Wait.Minutes(), room, p.Racks, p.NeedRacks)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}
