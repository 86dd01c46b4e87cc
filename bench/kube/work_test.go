package main

import "testing"

// packedOffline packs largest first onto the first GPU with room.
func TestPackedOffline(t *testing.T) {
	for _, c := range []struct {
		millis []int64
		want   int
	}{
		{nil, 0},
		{[]int64{810, 810, 160, 110}, 2},
		{[]int64{470, 470, 470, 320, 320, 320}, 3},
		{[]int64{600, 500, 400, 500}, 2},
		{[]int64{510, 510, 510}, 3},
	} {
		w := &workload{}
		for _, m := range c.millis {
			w.pods = append(w.pods, podSpec{milli: m})
		}
		w.pods = append(w.pods, podSpec{gpus: 8}) // whole GPUs are not shares
		if got := w.packedOffline(); got != c.want {
			t.Errorf("%v: %d GPUs, want %d", c.millis, got, c.want)
		}
	}
}
