package fleet

import (
	"reflect"
	"testing"
)

// The tree holds every domain once with the GPUs and nodes under it,
// children in name order, nodes at the leaves.
func TestTree(t *testing.T) {
	f := &Fleet{Levels: []string{"zone", "rack"}, Nodes: []Node{
		{Name: "c", Domains: []string{"z2", "r1"}, GPUs: 8, GPUModel: "H100-80GB"},
		{Name: "b", Domains: []string{"z1", "r2"}, GPUs: 4, GPUModel: "A100-80GB"},
		{Name: "a", Domains: []string{"z1", "r2"}, GPUs: 8, GPUModel: "H100-80GB"},
		{Name: "d", Domains: []string{"z1", "r1"}},
	}}
	node := func(name string, gpus int, model string) *Domain {
		return &Domain{Level: NodeLevel, Name: name, GPUs: gpus, Nodes: 1, Model: model}
	}
	want := &Domain{GPUs: 20, Nodes: 4, Children: []*Domain{
		{Level: "zone", Name: "z1", GPUs: 12, Nodes: 3, Children: []*Domain{
			{Level: "rack", Name: "r1", GPUs: 0, Nodes: 1, Children: []*Domain{node("d", 0, "")}},
			{Level: "rack", Name: "r2", GPUs: 12, Nodes: 2, Children: []*Domain{node("a", 8, "H100-80GB"), node("b", 4, "A100-80GB")}},
		}},
		{Level: "zone", Name: "z2", GPUs: 8, Nodes: 1, Children: []*Domain{
			{Level: "rack", Name: "r1", GPUs: 8, Nodes: 1, Children: []*Domain{node("c", 8, "H100-80GB")}},
		}},
	}}
	if got := f.Tree(); !reflect.DeepEqual(got, want) {
		t.Errorf("tree %+v, want %+v", got, want)
	}
	if got := (&Fleet{Nodes: []Node{{Name: "n", GPUs: 2}}}).Tree(); len(got.Children) != 1 || got.Children[0].Level != NodeLevel {
		t.Errorf("no levels: %+v, want the node under the root", got)
	}
}
