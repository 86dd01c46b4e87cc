package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// aliasPrefix starts the usage of a flag that is another name of one
// registered before it; printFlags lists it beside that one.
const aliasPrefix = "same as -"

// alias registers names as other names of the flag canonical (Slurm's
// short and long names beside corral's): they set the same value.
func alias(fs *flag.FlagSet, canonical string, names ...string) {
	f := fs.Lookup(canonical)
	for _, n := range names {
		fs.Var(f.Value, n, aliasPrefix+canonical)
	}
}

// canonical is the name of the flag f is another name of, or f's own.
func canonical(f *flag.Flag) string {
	if c, ok := strings.CutPrefix(f.Usage, aliasPrefix); ok {
		return c
	}
	return f.Name
}

// usageError is a mistake in the command line (an unknown flag, a value
// it cannot take, an argument missing or too many): run prints it on one
// line with a hint to the command's help and exits 2. cmd names the
// command when it is not the top-level one ("bench fgd").
type usageError struct {
	cmd string
	err error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usageErrorf is a usageError of the command being run.
func usageErrorf(format string, a ...any) error {
	return &usageError{err: fmt.Errorf(format, a...)}
}

// unexpected is the usage error of a positional argument fs's command
// does not take.
func unexpected(fs *flag.FlagSet) error {
	return &usageError{cmd: strings.TrimPrefix(fs.Name(), "corral "), err: fmt.Errorf("unexpected argument %q", fs.Arg(0))}
}

// flagProbe is an output that makes parseFlags hand over the flag set it
// is given instead of parsing: the completion scripts list each command's
// flags with it, without running the command.
type flagProbe struct {
	sets         []*flag.FlagSet
	interspersed []bool // per set: whether flags may follow its arguments
}

func (*flagProbe) Write(p []byte) (int, error) { return len(p), nil }

// parseFlags parses args with fs; flags may come before, between and
// after the positional arguments (fs.Args()), and "--" ends them. -h
// prints the command's help text (usage, then the flags; when usage is
// empty, fs.Usage) and returns flag.ErrHelp; a mistyped flag or value is
// a usageError of one line. Slurm's glued short flags (-n4, -t90) are
// taken as -n 4 and -t 90.
func parseFlags(fs *flag.FlagSet, usage string, args []string) error {
	return parse(fs, usage, args, true)
}

// parseLeadingFlags is parseFlags where the first positional argument
// ends the flags: what follows it is a command with flags of its own
// (corral submit [flags] [--] COMMAND ARGS...).
func parseLeadingFlags(fs *flag.FlagSet, usage string, args []string) error {
	return parse(fs, usage, args, false)
}

func parse(fs *flag.FlagSet, usage string, args []string, interspersed bool) error {
	if fs.Lookup("json") != nil && fs.Lookup("yaml") == nil {
		fs.Bool("yaml", false, "print the document --json gives as YAML, to stdout")
	}
	out := fs.Output()
	if p, ok := out.(*flagProbe); ok {
		p.sets = append(p.sets, fs)
		p.interspersed = append(p.interspersed, interspersed)
		return flag.ErrHelp
	}
	help := fs.Usage
	if usage != "" || help == nil {
		help = func() { fmt.Fprint(out, usage); printFlags(out, fs) }
	}
	fs.SetOutput(io.Discard) // the flag package's own message would come with every flag
	fs.Usage = func() {}
	err := fs.Parse(normalize(fs, args, interspersed))
	fs.SetOutput(out)
	fs.Usage = help
	switch {
	case errors.Is(err, flag.ErrHelp):
		help()
		return err
	case err != nil:
		return &usageError{cmd: strings.TrimPrefix(fs.Name(), "corral "), err: err}
	}
	return nil
}

// parseInterleaved is parseFlags returning the positional arguments.
func parseInterleaved(fs *flag.FlagSet, usage string, args []string) ([]string, error) {
	if err := parseFlags(fs, usage, args); err != nil {
		return nil, err
	}
	return fs.Args(), nil
}

// wantsHelp says whether args ask for help before any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// printFlags prints fs's flags like PrintDefaults, each with its other
// names on its line: "-tasks, -n, -ntasks int".
func printFlags(w io.Writer, fs *flag.FlagSet) {
	names := map[string][]string{}
	fs.VisitAll(func(f *flag.Flag) {
		if c := canonical(f); c != f.Name {
			names[c] = append(names[c], "-"+f.Name)
		}
	})
	show := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	show.SetOutput(w)
	var ignored []string
	fs.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Usage, ignoredPrefix) {
			ignored = append(ignored, "-"+f.Name)
			return
		}
		if canonical(f) != f.Name {
			return
		}
		name := strings.Join(append([]string{f.Name}, names[f.Name]...), ", ")
		show.Var(f.Value, name, f.Usage)
		show.Lookup(name).DefValue = f.DefValue
	})
	show.PrintDefaults()
	if len(ignored) > 0 {
		fmt.Fprintf(w, "Taken and ignored (one machine): %s\n", strings.Join(ignored, " "))
	}
}

// ignoredPrefix starts the usage of a flag taken and ignored (sbatch's
// --partition): printFlags lists them on one line.
const ignoredPrefix = "ignored: "

// normalize rewrites args for the flag package, which stops at the first
// positional argument: flags after positional arguments move before them,
// and the positional arguments follow a "--". Interspersed false keeps
// everything from the first positional argument on as it is. A short flag
// glued to its value (-n4, -G2, -t1:00:00) becomes two arguments, as
// Slurm's tools take them.
func normalize(fs *flag.FlagSet, args []string, interspersed bool) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		positional := a == "-" || !strings.HasPrefix(a, "-")
		switch {
		case a == "--":
			pos = append(pos, args[i+1:]...)
			i = len(args)
			continue
		case positional && !interspersed:
			pos = append(pos, args[i:]...)
			i = len(args)
			continue
		case positional:
			pos = append(pos, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if f := fs.Lookup(name); f != nil {
			flags = append(flags, a)
			if !hasValue && !isBool(f) && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		if f := fs.Lookup(a[1:min(2, len(a))]); f != nil && !strings.HasPrefix(a, "--") && !isBool(f) {
			flags = append(flags, a[:2], a[2:])
			continue
		}
		flags = append(flags, a) // unknown: the flag package names it
	}
	if len(pos) == 0 {
		return flags
	}
	return append(append(flags, "--"), pos...)
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
