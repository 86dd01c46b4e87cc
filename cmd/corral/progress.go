package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// progress draws a one-line bar on a terminal and stays silent in pipes.
type progress struct {
	w     io.Writer
	label string
	on    bool
	last  int
}

func newProgress(w io.Writer, quiet bool, label string) *progress {
	return &progress{w: w, label: label, on: !quiet && isTerminal(w)}
}

func (p *progress) update(done, total int) {
	if !p.on || total == 0 {
		return
	}
	pct := done * 100 / total
	if pct == p.last && done != total {
		return
	}
	p.last = pct
	const width = 30
	fill := width * done / total
	fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d", p.label, strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, total)
}

func (p *progress) finish() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
