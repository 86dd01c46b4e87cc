package sched

import "testing"

func TestMovesOff(t *testing.T) {
	cases := []struct {
		name string
		s    Struck
		want bool
	}{
		{"a gang on a failed node moves", Struck{Tasks: 2}, true},
		{"a large gang moves", Struck{Tasks: 64}, true},
		{"a single task is requeued", Struck{Tasks: 1}, false},
		{"a gang given notice is requeued", Struck{Tasks: 8, Notice: true}, false},
		{"a gang that asks to be requeued is", Struck{Tasks: 8, Requeue: true}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, why := MovesOff(c.s)
			if got != c.want || got == (why != "") {
				t.Errorf("MovesOff(%+v) = %v, %q; want %v, with a reason exactly when false", c.s, got, why, c.want)
			}
		})
	}
}
