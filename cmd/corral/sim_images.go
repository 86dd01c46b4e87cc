package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/corral-sched/corral/internal/sim"
	"github.com/corral-sched/corral/internal/workload"
)

// imagePull gives the workload's jobs their images and says how fast
// nodes pull them (--image-pull); nil without the flag.
func imagePull(o simOptions, w *workload.Workload) *sim.ImagePull {
	if o.imagePull == "" {
		return nil
	}
	return &sim.ImagePull{BytesPerSecond: o.pullRate, Sizes: workload.AssignImages(w)}
}

// imageSizesHelp lists the image sizes assumed per class of work.
func imageSizesHelp() string {
	var parts []string
	for class, size := range workload.ImageSizes {
		parts = append(parts, fmt.Sprintf("%s %d GiB", class, size>>30))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// writeImagePulls says what pulling images cost each policy.
func writeImagePulls(w io.Writer, rate string, results []*sim.Result) {
	fmt.Fprintf(w, "\nimage pulls at %s per node (nodes start empty and keep what they pull):\n", rate)
	fmt.Fprintf(w, "  %-15s %7s %7s %10s %11s %11s %6s %11s %14s\n", "policy", "starts", "pulled", "node pulls", "delay mean", "delay max", "gangs", "gang delay", "GPU-h pulling")
	for _, r := range results {
		p := r.Summary.ImagePulls
		if p == nil {
			continue
		}
		fmt.Fprintf(w, "  %-15s %7d %7d %10d %9.1f m %9.1f m %6d %9.1f m %14.1f\n", r.Policy, p.Starts, p.Pulled, p.NodePulls,
			p.MeanDelayMin, p.MaxDelayMin, p.GangPulled, p.GangMeanDelayMin, p.GPUHours)
	}
	fmt.Fprintln(w, "  pulled: starts that waited for a pull on some node; delay: how long those waited; gangs: of them, jobs on")
	fmt.Fprintln(w, "  several nodes, which wait for the slowest; GPU-h pulling: GPUs held while their jobs' images were pulled.")
}
