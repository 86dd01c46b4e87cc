package sbatch

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// argKind says whether an option takes a value.
type argKind int

const (
	none     argKind = iota // a switch: --hold
	required                // --time=90, --time 90, -t90, -t 90
	optional                // only with '=': --nice, --nice=5
)

// option is one of sbatch's options and what corral makes of it:
// the submit flag it sets (flag, with the value made by value when
// set, else as written), or why it is ignored, or why it is refused.
type option struct {
	long   string
	short  string
	arg    argKind
	flag   string
	value  func(string) (string, error)
	ignore string
	refuse string
}

// Why options are ignored or refused, on one machine.
const (
	oneMachine = "this server is one machine"
	hintOnly   = "a placement hint for a cluster; the server places tasks on its GPUs itself"
)

// options is every sbatch option corral knows.
var options = []option{
	{long: "job-name", short: "J", arg: required, flag: "name"},
	{long: "time", short: "t", arg: required, flag: "time"},
	{long: "ntasks", short: "n", arg: required, flag: "tasks"},
	{long: "ntasks-per-node", arg: required, flag: "tasks"},
	{long: "nodes", short: "N", arg: required, value: oneNode},
	{long: "cpus-per-task", short: "c", arg: required, flag: "cpu"},
	{long: "cpus-per-gpu", arg: required, flag: "cpus-per-gpu"},
	{long: "mem", arg: required, flag: "mem"},
	{long: "mem-per-cpu", arg: required, flag: "mem-per-cpu"},
	{long: "mem-per-gpu", arg: required, flag: "mem-per-gpu"},
	{long: "gres", arg: required, flag: "gres"},
	{long: "gpus", short: "G", arg: required, flag: "gpus"},
	{long: "gpus-per-node", arg: required, flag: "gpus"},
	{long: "gpus-per-task", arg: required, flag: "gpus-per-task"},
	{long: "chdir", short: "D", arg: required, flag: "workdir"},
	{long: "output", short: "o", arg: required, flag: "output"},
	{long: "error", short: "e", arg: required, flag: "error"},
	{long: "open-mode", arg: required, flag: "open-mode"},
	{long: "array", short: "a", arg: required, flag: "array"},
	{long: "dependency", short: "d", arg: required, flag: "dependency"},
	{long: "kill-on-invalid-dep", arg: required, flag: "kill-on-invalid-dep", value: yesNo},
	{long: "hold", short: "H", flag: "hold", value: always("true")},
	{long: "begin", short: "b", arg: required, flag: "begin"},
	{long: "nice", arg: optional, flag: "nice", value: orDefault("100")},
	{long: "priority", arg: required, flag: "priority"},
	{long: "requeue", flag: "requeue", value: always("true")},
	{long: "no-requeue", flag: "requeue", value: always("false")},
	{long: "export", arg: required, flag: "export"},
	{long: "signal", arg: required, flag: "signal"},
	{long: "parsable", flag: "parsable", value: always("true")},
	{long: "wait", short: "W", flag: "wait", value: always("true")},

	{long: "account", short: "A", arg: required, ignore: "corral charges the tenant of your token"},
	{long: "qos", short: "q", arg: required, ignore: "no QOS here; --priority orders your own jobs"},
	{long: "partition", short: "p", arg: required, ignore: oneMachine + ", one partition"},
	{long: "exclusive", arg: optional, ignore: "a job's GPUs are always its own; other jobs may use the machine's other GPUs"},
	{long: "oversubscribe", short: "s", ignore: "a job's GPUs are always its own"},
	{long: "constraint", short: "C", arg: required, ignore: oneMachine + " of one GPU model; --gres gpu:TYPE:N checks the model"},
	{long: "reservation", arg: required, ignore: "no reservations here"},
	{long: "nodelist", short: "w", arg: required, ignore: oneMachine},
	{long: "exclude", short: "x", arg: required, ignore: oneMachine},
	{long: "mail-type", arg: required, ignore: "the server sends no mail"},
	{long: "mail-user", arg: required, ignore: "the server sends no mail"},
	{long: "comment", arg: required, ignore: "comments are not kept"},
	{long: "wckey", arg: required, ignore: "no workload keys here"},
	{long: "distribution", short: "m", arg: required, ignore: hintOnly},
	{long: "hint", arg: required, ignore: hintOnly},
	{long: "gpu-bind", arg: required, ignore: hintOnly},
	{long: "cpu-bind", arg: required, ignore: hintOnly},
	{long: "mem-bind", arg: required, ignore: hintOnly},
	{long: "threads-per-core", arg: required, ignore: hintOnly},
	{long: "ntasks-per-core", arg: required, ignore: hintOnly},
	{long: "ntasks-per-socket", arg: required, ignore: hintOnly},
	{long: "sockets-per-node", arg: required, ignore: hintOnly},
	{long: "cores-per-socket", arg: required, ignore: hintOnly},
	{long: "extra-node-info", short: "B", arg: required, ignore: hintOnly},
	{long: "gpu-freq", arg: required, ignore: "GPU clocks are the admin's"},
	{long: "cpu-freq", arg: required, ignore: "CPU clocks are the admin's"},
	{long: "acctg-freq", arg: required, ignore: "the server keeps its own accounting"},
	{long: "profile", arg: required, ignore: "no profiling plugin here"},
	{long: "tmp", arg: required, ignore: "no local scratch is reserved"},
	{long: "licenses", short: "L", arg: required, ignore: "no licenses are counted"},
	{long: "overcommit", short: "O", ignore: "CPU limits are the job's own"},
	{long: "no-kill", short: "k", arg: optional, ignore: "a gang lives and dies whole"},
	{long: "propagate", arg: optional, ignore: "resource limits are the server's"},
	{long: "get-user-env", arg: optional, ignore: "the job gets your environment as --export says"},
	{long: "verbose", short: "v", ignore: "nothing to say"},
	{long: "quiet", short: "Q", ignore: "nothing to say"},
	{long: "spread-job", ignore: oneMachine},
	{long: "use-min-nodes", ignore: oneMachine},
	{long: "switches", arg: required, ignore: oneMachine},
	{long: "mincpus", arg: required, ignore: "ask for --cpus-per-task"},

	{long: "uid", arg: required, refuse: "a job runs as its tenant's Unix user"},
	{long: "gid", arg: required, refuse: "a job runs as its tenant's Unix user"},
	{long: "test-only", refuse: "corral explain JOB says why a job waits and when it could start"},
	{long: "time-min", arg: required, refuse: "jobs run for their --time"},
	{long: "deadline", arg: required, refuse: "no deadlines here"},
	{long: "clusters", short: "M", arg: required, refuse: oneMachine},
	{long: "container", arg: required, refuse: "use --image"},
	{long: "ntasks-per-gpu", arg: required, refuse: "give --gpus-per-task"},
	{long: "gpus-per-socket", arg: required, refuse: "give --gpus-per-task"},
	{long: "burst-buffer", arg: required, refuse: "no burst buffers here"},
	{long: "bb", arg: required, refuse: "no burst buffers here"},
	{long: "input", short: "i", arg: required, refuse: "a job reads no standard input"},
	{long: "nodefile", short: "F", arg: required, refuse: oneMachine},
	{long: "export-file", arg: required, refuse: "give --export"},
	{long: "batch", arg: required, refuse: oneMachine},
	{long: "wrap", arg: required, refuse: "--wrap goes on the command line, not in a script"},
}

// lookup finds the option named "--long" or "-s".
func lookup(name string) (option, bool) {
	for _, o := range options {
		if name == "--"+o.long || (o.short != "" && name == "-"+o.short) {
			return o, true
		}
	}
	return option{}, false
}

// Arg is a submit flag set by a directive.
type Arg struct {
	Line  int
	Flag  string // corral submit's flag name: "gpus", "time", ...
	Value string
	Text  string // the #SBATCH line
}

// Note says what corral did not take of a directive, and why.
type Note struct {
	Line int
	Text string
}

// Interpret maps the script's directives to submit flags, in order:
// later ones win, as in sbatch. Ignored directives and #SBATCH lines
// after the first command become notes; refused and unknown ones are
// errors, each naming the script and line.
func Interpret(s *Script) ([]Arg, []Note, error) {
	var args []Arg
	var notes []Note
	var errs []error
	at := func(d Directive) string { return fmt.Sprintf("%s:%d: %s", s.Name, d.Line, d.Text) }
	for _, d := range s.Directives {
		o, ok := lookup(d.Name)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: unknown option %s", at(d), d.Name))
			continue
		case o.refuse != "":
			errs = append(errs, fmt.Errorf("%s: %s is not supported: %s", at(d), d.Name, o.refuse))
			continue
		case o.arg == none && d.HasValue:
			errs = append(errs, fmt.Errorf("%s: %s takes no value", at(d), d.Name))
			continue
		case o.ignore != "":
			notes = append(notes, Note{d.Line, fmt.Sprintf("%s:%d: #SBATCH %s ignored: %s", s.Name, d.Line, d.Name, o.ignore)})
			continue
		}
		v := d.Value
		if o.value != nil {
			var err error
			if v, err = o.value(d.Value); err != nil {
				errs = append(errs, fmt.Errorf("%s: %s: %w", at(d), d.Name, err))
				continue
			}
		}
		if o.flag != "" {
			args = append(args, Arg{Line: d.Line, Flag: o.flag, Value: v, Text: d.Text})
		}
	}
	for _, n := range s.Late {
		notes = append(notes, Note{n, fmt.Sprintf("%s:%d: #SBATCH after the first command (line %d) ignored, as sbatch ignores it", s.Name, n, s.Command)})
	}
	return args, notes, errors.Join(errs...)
}

// oneNode takes --nodes when it can be met by one machine: 1, or a
// range starting at 1.
func oneNode(v string) (string, error) {
	lo, _, _ := strings.Cut(v, "-")
	if n, err := strconv.Atoi(lo); err != nil || n != 1 {
		return "", fmt.Errorf("%s nodes: %s; ask for the GPUs of one node (the tasks of a job all run here)", v, oneMachine)
	}
	return "", nil
}

func yesNo(v string) (string, error) {
	switch strings.ToLower(v) {
	case "yes", "y", "1", "true":
		return "true", nil
	case "no", "n", "0", "false":
		return "false", nil
	}
	return "", fmt.Errorf("%q: want yes or no", v)
}

func always(v string) func(string) (string, error) {
	return func(string) (string, error) { return v, nil }
}

func orDefault(def string) func(string) (string, error) {
	return func(v string) (string, error) {
		if v == "" {
			return def, nil
		}
		return v, nil
	}
}

// Ignored is an option of sbatch that corral takes and ignores; the CLI
// accepts it too and says so.
type Ignored struct {
	Long, Short string
	TakesValue  bool
	Why         string
}

// IgnoredOptions lists the options corral takes and ignores, by long
// name.
func IgnoredOptions() []Ignored {
	var out []Ignored
	for _, o := range options {
		if o.ignore != "" {
			out = append(out, Ignored{Long: o.long, Short: o.short, TakesValue: o.arg == required, Why: o.ignore})
		}
	}
	slices.SortFunc(out, func(a, b Ignored) int { return strings.Compare(a.Long, b.Long) })
	return out
}
