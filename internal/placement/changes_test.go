package placement

import (
	"slices"
	"testing"
)

// TestChangeLogListsWhatChangedBetweenReads pins the store's change log
// and generations, which the policies' kept scores and the guards' counts
// trust: a node changed between two reads is listed, one changed and
// restored is not, and a generation once given to some contents is never
// given to others.
func TestChangeLogListsWhatChangedBetweenReads(t *testing.T) {
	c := NewCluster([]Node{
		{Name: "a", CPUMilli: 8000, MemoryMiB: 1024, GPUs: 2, Model: "G"},
		{Name: "b", CPUMilli: 8000, MemoryMiB: 1024, GPUs: 2, Model: "G"},
		{Name: "c", CPUMilli: 8000, MemoryMiB: 1024, GPUs: 2, Model: "G"},
	})
	read := func(pos int) ([]int, int) {
		t.Helper()
		nodes, next, ok := c.ChangedSince(pos)
		if !ok {
			t.Fatalf("the log no longer reaches back to %d", pos)
		}
		return slices.Clone(nodes), next
	}
	_, pos := read(0)

	// a: changed. b: changed and restored (a what-if). c: untouched.
	genA, genB := c.Generation(0), c.Generation(1)
	c.SetGPULeft(0, 0, 500)
	saved := c.SaveNode(1, nil)
	c.AddHost(1, -1000, -128)
	c.SetGPULeft(1, 1, 0)
	c.RestoreNode(1, saved)
	listed, pos := read(pos)
	if !slices.Equal(listed, []int{0}) {
		t.Fatalf("listed %v, want only the node that changed, [0]", listed)
	}
	if c.Generation(0) == genA || c.Generation(1) != genB {
		t.Fatalf("generations: a %d (was %d, changed), b %d (was %d, restored)", c.Generation(0), genA, c.Generation(1), genB)
	}
	if c.CPULeft[1] != 8000 || c.MemLeft[1] != 1024 || !slices.Equal(c.GPULeft[1], []int64{1000, 1000}) || c.UsedGPUMilli() != 500 || c.CPULeftMilli() != 24000 {
		t.Fatalf("b not restored: cpu %d mem %d gpus %v; used %d, cpu left %d", c.CPULeft[1], c.MemLeft[1], c.GPULeft[1], c.UsedGPUMilli(), c.CPULeftMilli())
	}

	// A reader that saw b mid-what-if sees it listed again once restored,
	// and b's next contents get a generation it never had.
	saved = c.SaveNode(1, nil)
	c.SetGPULeft(1, 0, 0)
	mid := c.Generation(1)
	listed, pos = read(pos)
	if !slices.Equal(listed, []int{1}) {
		t.Fatalf("listed %v mid-what-if, want [1]", listed)
	}
	c.RestoreNode(1, saved)
	if listed, pos = read(pos); !slices.Equal(listed, []int{1}) {
		t.Fatalf("listed %v after the restore, want [1]", listed)
	}
	c.SetGPULeft(1, 1, 250)
	if g := c.Generation(1); g == mid || g == genB {
		t.Fatalf("b's new contents got generation %d, already given (%d mid-what-if, %d before)", g, mid, genB)
	}
	if listed, _ = read(pos); !slices.Equal(listed, []int{1}) {
		t.Fatalf("listed %v, want [1]", listed)
	}
}
