package peers

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Hold is one task's tenure on a node: the GPUs it held there from its
// binding (or, in Slurm, its allocation) to its end — success, failure or
// deletion — in simulated time from the replay's start. A preempted task
// that runs again holds again, as a Hold of its own.
type Hold struct {
	Job, Task string // the workload's job; the task's completion index
	Node      string
	GPUs      int
	From, To  time.Duration
}

// holdsHeader names the columns of a holds file.
var holdsHeader = []string{"job", "task", "node", "gpus", "from_s", "to_s"}

// WriteHolds writes holds as CSV, one hold a line, times in simulated
// seconds.
func WriteHolds(out io.Writer, holds []Hold) error {
	w := csv.NewWriter(out)
	if err := w.Write(holdsHeader); err != nil {
		return err
	}
	for _, h := range holds {
		if err := w.Write([]string{h.Job, h.Task, h.Node, strconv.Itoa(h.GPUs), secs(h.From), secs(h.To)}); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

// ReadHolds reads a file WriteHolds wrote; name is for errors.
func ReadHolds(in io.Reader, name string) ([]Hold, error) {
	r := csv.NewReader(in)
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(rows) == 0 || !slices.Equal(rows[0], holdsHeader) {
		return nil, fmt.Errorf("%s: want the header %s", name, strings.Join(holdsHeader, ","))
	}
	out := make([]Hold, 0, len(rows)-1)
	for i, row := range rows[1:] {
		h, err := parseHold(row)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, i+2, err)
		}
		out = append(out, h)
	}
	return out, nil
}

func parseHold(row []string) (Hold, error) {
	gpus, err := strconv.Atoi(row[3])
	if err != nil || gpus < 0 {
		return Hold{}, fmt.Errorf("gpus %q: want a count", row[3])
	}
	var t [2]time.Duration
	for i, s := range row[4:6] {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 0 {
			return Hold{}, fmt.Errorf("%s %q: want seconds", holdsHeader[4+i], s)
		}
		t[i] = time.Duration(f * float64(time.Second)).Round(time.Millisecond)
	}
	if t[1] < t[0] {
		return Hold{}, fmt.Errorf("ends at %v before it starts at %v", t[1], t[0])
	}
	return Hold{Job: row[0], Task: row[1], Node: row[2], GPUs: gpus, From: t[0], To: t[1]}, nil
}

// WriteHoldsFile writes holds, sorted, to the file at path.
func WriteHoldsFile(path string, holds []Hold) error {
	SortHolds(holds)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteHolds(f, holds); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadHoldsFile reads the holds file at path.
func ReadHoldsFile(path string) ([]Hold, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadHolds(f, path)
}

// SortHolds orders holds by start, then job, task and node.
func SortHolds(holds []Hold) {
	slices.SortFunc(holds, func(a, b Hold) int {
		return cmp.Or(cmp.Compare(a.From, b.From), strings.Compare(a.Job, b.Job), strings.Compare(a.Task, b.Task), strings.Compare(a.Node, b.Node))
	})
}
