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
// subs are the commands under it that take flags of their own (bench
// fgd), for the completion scripts.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
	subs    []string
}

func commands() []command {
	return []command{
		{"bench", "run a benchmark (bench fgd: the packing benchmark of the FGD paper)", runBench, []string{"fgd", "scale"}},
		{"sim", "replay a workload through time under several policies; compare waits and GPU use", runSim, nil},
		{"prices", "list the price catalog: every figure with its source, date and age", runPrices, nil},
		{"plan", "size 1- or 3-year GPU commitments for an hourly demand; compare packed and unpacked", runPlan, nil},
		{"place", "place gangs of GPU jobs on a fleet described in YAML, or say why they do not fit", runPlace, nil},
		{"server", "run the daemon that queues and runs jobs on this machine's GPUs (try: corral server --dev)", runServer, []string{"tenant"}},
		{"submit", "queue a job or a batch script on a corral server (like sbatch)", runSubmit, nil},
		{"sbatch", "queue a batch script, reading its #SBATCH lines, and answer as sbatch does", runSbatch, nil},
		{"run", "run a job in the foreground: its output here, its exit code yours (like srun)", runRun, nil},
		{"queue", "list waiting and running jobs and why they wait (like squeue)", runQueue, nil},
		{"gpus", "list the server's GPUs and what runs on each (like sinfo)", runGPUs, nil},
		{"cancel", "cancel jobs (like scancel)", runCancel, nil},
		{"hold", "hold waiting jobs (like scontrol hold)", runHold, nil},
		{"release", "release held jobs (like scontrol release)", runRelease, nil},
		{"requeue", "put running or ended jobs back in the queue (like scontrol requeue)", runRequeue, nil},
		{"update", "change a waiting job (time limit, priority, name, begin, dependency) or a running one's time limit (like scontrol update)", runUpdate, nil},
		{"logs", "print a job's output; -f follows it", runLogs, nil},
		{"acct", "GPU use per job and per tenant (like sacct)", runAcct, nil},
		{"explain", "say why a job waits and when it could start", runExplain, nil},
		{"kube-scheduler", "schedule pods and pod groups on a Kubernetes cluster with corral's core", runKubeScheduler, nil},
		{"version", "print corral's version, commit and Go version (also: corral --version)", runVersion, nil},
		{"completion", "print a shell completion script: corral completion bash|zsh|fish", runCompletion, nil},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the command line args and returns the exit status: 0, 1 for
// a failure, 2 for a mistake in the command line. Help asked for (-h)
// goes to stdout.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		shortUsage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(stdout)
		return 0
	case "help":
		if len(args) == 1 {
			usage(stdout)
			return 0
		}
		args = append(args[1:2], "-h") // corral help sim: corral sim -h
	case "--version", "-version":
		args = append([]string{"version"}, args[1:]...)
	}
	c, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "corral: unknown command %q\nrun 'corral -h' for the list of commands\n", args[0])
		return 2
	}
	if wantsHelp(args[1:]) {
		stderr = stdout
	} else if code, ok := runYAML(c, args[1:], stdout, stderr); ok {
		return code
	} else if code, ok := runJSONToStdout(c, args[1:], stdout, stderr); ok {
		return code
	}
	return exitCode(c.name, c.run(args[1:], stdout, stderr), stderr)
}

func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// exitCode prints err, if any, and says which status it means. A usage
// error is one line and a hint to the command's help.
func exitCode(name string, err error, stderr io.Writer) int {
	var ue *usageError
	var es *exitStatus
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &es):
		return es.code
	case errors.As(err, &ue):
		if ue.cmd != "" {
			name = ue.cmd
		}
		fmt.Fprintf(stderr, "corral %s: %v\nrun 'corral %s -h' for usage\n", name, err, name)
		return 2
	}
	if msg, ok := noServer(err); ok {
		fmt.Fprintf(stderr, "corral %s: %s\n", name, msg)
		return 1
	}
	fmt.Fprintf(stderr, "corral %s: %v\n", name, err)
	return 1
}

// shortUsage is what corral alone prints.
func shortUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: corral <command> [flags]")
	fmt.Fprintln(w, "Run 'corral -h' for the list of commands, 'corral <command> -h' for a command's flags.")
	fmt.Fprintln(w, "Start with: corral bench fgd")
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
	fmt.Fprintln(w, "Flags may come before or after a command's arguments; '--' ends them.")
	fmt.Fprintln(w, "Run 'corral <command> -h' for a command's flags. Start with: corral bench fgd")
}
