// Command corral is a GPU scheduler for machine-learning work.
//
// Each subcommand lives in its own file; main only dispatches.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// command is one subcommand: its name, a one-line summary, and its entry.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"bench", "run a benchmark (bench fgd: the packing benchmark of the FGD paper)", runBench},
		{"sim", "replay a workload through time under several policies; compare waits and GPU use", runSim},
		{"prices", "list the price catalog: every figure with its source, date and age", runPrices},
		{"plan", "size 1- or 3-year GPU commitments for an hourly demand; compare packed and unpacked", runPlan},
		{"place", "place gangs of GPU jobs on a fleet described in YAML, or say why they do not fit", runPlace},
		{"server", "run the daemon that queues and runs jobs on this machine's GPUs (try: corral server --dev)", runServer},
		{"submit", "queue a job on a corral server (like sbatch)", runSubmit},
		{"queue", "list waiting and running jobs and why they wait (like squeue)", runQueue},
		{"gpus", "list the server's GPUs and what runs on each (like sinfo)", runGPUs},
		{"cancel", "cancel jobs (like scancel)", runCancel},
		{"logs", "print a job's output; -f follows it", runLogs},
		{"acct", "GPU use per job and per tenant (like sacct)", runAcct},
		{"explain", "say why a job waits and when it could start", runExplain},
		{"kube-scheduler", "schedule pods and pod groups on a Kubernetes cluster with corral's core", runKubeScheduler},
		{"version", "print corral's version", runVersion},
	}
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(args[1:], stdout, stderr)
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			if err != nil {
				fmt.Fprintf(stderr, "corral %s: %v\n", c.name, err)
				return 1
			}
			return 0
		}
	}
	fmt.Fprintf(stderr, "corral: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "corral schedules GPU work: it packs gangs of GPU tasks onto a fleet so that cards are full,")
	fmt.Fprintln(w, "gangs start whole and topology is respected, and it shows by how much.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: corral <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-15s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'corral <command> -h' for a command's flags. Start with: corral bench fgd")
}

func runVersion(_ []string, stdout, _ io.Writer) error {
	fmt.Fprintf(stdout, "corral %s\n", version)
	return nil
}
