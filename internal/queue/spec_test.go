package queue

import (
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		name     string
		specs    []Spec
		halfLife time.Duration
		want     []string // substrings of the error
	}{
		{"duplicate", []Spec{{Name: "a"}, {Name: "b"}, {Name: "a"}}, 0,
			[]string{`queue "a": declared twice`}},
		{"unknown parent", []Spec{{Name: "a", Parent: "org"}}, 0,
			[]string{`queue "a": unknown parent "org"`}},
		{"cycle", []Spec{{Name: "a", Parent: "b"}, {Name: "b", Parent: "c"}, {Name: "c", Parent: "a"}, {Name: "d", Parent: "a"}}, 0,
			[]string{`queue "a": parent cycle a -> b -> c -> a`, `queue "b": parent cycle b -> c -> a -> b`, `queue "c": parent cycle`}},
		{"own parent", []Spec{{Name: "a", Parent: "a"}}, 0,
			[]string{`queue "a": is its own parent`}},
		{"negative nominal", []Spec{{Name: "a", Nominal: Amounts{h100: 8000, a100: -1}}}, 0,
			[]string{`queue "a": negative nominal quota: -1 milli-GPUs of A100-40GB/on-demand`}},
		{"negative limits", []Spec{{Name: "a", Cohort: "c", BorrowingLimit: Amounts{h100: -1}, LendingLimit: Amounts{h100: -2}}}, 0,
			[]string{`queue "a": negative borrowing limit: -1`, `queue "a": negative lending limit: -2`}},
		{"limits without a cohort", []Spec{{Name: "a", LendingLimit: gpu(1)}}, 0,
			[]string{`queue "a": borrowing or lending limit without a cohort`}},
		{"weight", []Spec{{Name: "a", Weight: -1}}, 0,
			[]string{`queue "a": weight -1`}},
		{"order", []Spec{{Name: "a", Order: 7}}, 0,
			[]string{`queue "a": unknown order 7`}},
		{"no name", []Spec{{}}, 0,
			[]string{"queue with no name"}},
		{"half-life", []Spec{{Name: "a"}}, -time.Hour,
			[]string{"negative fair-share half-life"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewBook(c.specs, c.halfLife)
			if err == nil {
				t.Fatal("NewBook accepted bad specs")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
	good := []Spec{
		{Name: "org", Cohort: "c", Nominal: gpu(8), BorrowingLimit: gpu(0), Weight: 2, Order: ShortestFirst},
		{Name: "t", Parent: "org", Cohort: "x", LendingLimit: gpu(1)},
	}
	if _, err := NewBook(good, 0); err != nil {
		t.Errorf("NewBook(good specs): %v", err)
	}
}

func TestParseOrder(t *testing.T) {
	for _, o := range []Order{FIFO, PriorityFIFO, ShortestFirst} {
		if got, err := ParseOrder(o.String()); err != nil || got != o {
			t.Errorf("ParseOrder(%q) = %v, %v", o.String(), got, err)
		}
	}
	if _, err := ParseOrder("lifo"); err == nil {
		t.Error(`ParseOrder("lifo") succeeded`)
	}
}
