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

// parseFlags parses args with fs. -h prints the command's help text and
// its flags, and returns flag.ErrHelp; a mistyped flag is one line that
// names it and points to -h. Slurm's glued short flags (-n4, -t90) are
// taken as -n 4 and -t 90.
func parseFlags(fs *flag.FlagSet, usage string, args []string) error {
	out := fs.Output()
	fs.SetOutput(io.Discard) // the flag package's own message would come with every flag
	fs.Usage = func() {}
	err := fs.Parse(splitGlued(fs, args))
	fs.SetOutput(out)
	fs.Usage = func() { fmt.Fprint(out, usage); printFlags(out, fs) }
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return err
	case err != nil:
		return fmt.Errorf("%w (see 'corral %s -h')", err, fs.Name())
	}
	return nil
}

// parseInterleaved parses flags that may come before, between and after
// the positional arguments, which it returns in order; after "--" every
// argument is positional.
func parseInterleaved(fs *flag.FlagSet, usage string, args []string) ([]string, error) {
	var pos []string
	for {
		before := len(args)
		if err := parseFlags(fs, usage, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(rest) < before && args[before-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
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
	fs.VisitAll(func(f *flag.Flag) {
		if canonical(f) != f.Name {
			return
		}
		name := strings.Join(append([]string{f.Name}, names[f.Name]...), ", ")
		show.Var(f.Value, name, f.Usage)
		show.Lookup(name).DefValue = f.DefValue
	})
	show.PrintDefaults()
}

// splitGlued rewrites a short flag glued to its value (-n4, -G2, -t1:00:00)
// as two arguments, as Slurm's tools take them. It stops at "--" and at
// the first argument that is not a flag (the command).
func splitGlued(fs *flag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args)+2)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			return append(out, args[i:]...)
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if f := fs.Lookup(name); f != nil {
			out = append(out, a)
			if !hasValue && !isBool(f) && i+1 < len(args) {
				out = append(out, args[i+1])
				i++
			}
			continue
		}
		if f := fs.Lookup(a[1:min(2, len(a))]); f != nil && !strings.HasPrefix(a, "--") && !isBool(f) {
			out = append(out, a[:2], a[2:])
			continue
		}
		out = append(out, a) // unknown: the flag package names it
	}
	return out
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
