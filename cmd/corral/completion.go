package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

const completionUsage = `Usage: corral completion bash|zsh|fish

Prints a completion script for the shell, made from corral's commands and
their flags. Load it in the shell's start-up file:

  bash:  source <(corral completion bash)          (~/.bashrc)
  zsh:   source <(corral completion zsh)           (~/.zshrc, after compinit)
  fish:  corral completion fish > ~/.config/fish/completions/corral.fish

Flags:
`

// words are the arguments, other than flags and files, a command takes.
var words = map[string][]string{
	"completion":    {"bash", "zsh", "fish"},
	"server tenant": {"list", "create", "set", "token"},
}

// entry is a command line to complete: "sim", "bench fgd".
type entry struct {
	path    string
	summary string
	subs    []string
	flags   []*flag.Flag
}

func runCompletion(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("completion", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := parseFlags(fs, completionUsage, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErrorf("give one shell: bash, zsh or fish")
	}
	gen := map[string]func(io.Writer, []entry){"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}[fs.Arg(0)]
	if gen == nil {
		return usageErrorf("shell %q: want bash, zsh or fish", fs.Arg(0))
	}
	entries, err := completionEntries()
	if err != nil {
		return err
	}
	gen(stdout, entries)
	return nil
}

// completionEntries lists every command and command under one with its
// flags, which it reads by asking each for help with a flagProbe.
func completionEntries() ([]entry, error) {
	var out []entry
	for _, c := range commands() {
		fl, err := commandFlags(c)
		if err != nil {
			return nil, err
		}
		out = append(out, entry{path: c.name, summary: c.summary, subs: c.subs, flags: fl})
		for _, s := range c.subs {
			fl, err := commandFlags(c, s)
			if err != nil {
				return nil, err
			}
			out = append(out, entry{path: c.name + " " + s, flags: fl})
		}
	}
	return out, nil
}

// commandFlags are the flags of c (or of sub under it), sorted by name.
func commandFlags(c command, sub ...string) ([]*flag.Flag, error) {
	p := &flagProbe{}
	if err := c.run(append(slices.Clone(sub), "-h"), p, p); err != nil && !errors.Is(err, flag.ErrHelp) {
		return nil, fmt.Errorf("flags of %s: %w", strings.Join(append([]string{c.name}, sub...), " "), err)
	}
	var fl []*flag.Flag
	for _, fs := range p.sets {
		fs.VisitAll(func(f *flag.Flag) { fl = append(fl, f) })
	}
	slices.SortFunc(fl, func(a, b *flag.Flag) int { return strings.Compare(a.Name, b.Name) })
	return fl, nil
}

// dashed is how a flag is written: -n, --name.
func dashed(f *flag.Flag) string {
	if len(f.Name) == 1 {
		return "-" + f.Name
	}
	return "--" + f.Name
}

// summary is the first line of a flag's help, shortened for a menu.
func summary(f *flag.Flag) string {
	s := f.Usage
	if c := canonical(f); c != f.Name {
		s = "same as " + dashed(&flag.Flag{Name: c})
	}
	s, _ = strings.CutSuffix(strings.SplitN(s, "\n", 2)[0], ".")
	s = strings.ReplaceAll(s, "`", "")
	if r := []rune(s); len(r) > 72 {
		s = string(r[:71]) + "…"
	}
	return s
}

// quote is s in single quotes for a POSIX shell, zsh or fish.
func quote(s string, fish bool) string {
	if fish {
		s = strings.ReplaceAll(s, `\`, `\\`)
		return "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// flagWords are the dashed names of fl, and of those that take a value.
func flagWords(fl []*flag.Flag) (all, valued []string) {
	for _, f := range fl {
		all = append(all, dashed(f))
		if !isBool(f) {
			valued = append(valued, dashed(f))
		}
	}
	return all, valued
}
