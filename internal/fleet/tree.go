package fleet

import "sort"

// Domain is one domain of a fleet's topology tree with what it holds: the
// whole fleet at the root (level ""), a node at the leaves (level
// NodeLevel, with its GPU model).
type Domain struct {
	Level    string    `json:"level"`
	Name     string    `json:"name"`
	GPUs     int       `json:"gpus"`
	Nodes    int       `json:"nodes"`
	Model    string    `json:"model,omitempty"`
	Children []*Domain `json:"children,omitempty"`
}

// Tree is the fleet's topology: every domain of every level with its GPUs
// and nodes, children in name order.
func (f *Fleet) Tree() *Domain {
	root := &Domain{}
	for i := range f.Nodes {
		n := &f.Nodes[i]
		d := root
		d.add(n)
		for l, name := range n.Domains {
			d = d.child(f.Levels[l], name)
			d.add(n)
		}
		d.Children = append(d.Children, &Domain{Level: NodeLevel, Name: n.Name, GPUs: n.GPUs, Nodes: 1, Model: n.GPUModel})
	}
	root.sort()
	return root
}

func (d *Domain) add(n *Node) { d.GPUs, d.Nodes = d.GPUs+n.GPUs, d.Nodes+1 }

// child is d's child of that level and name, added when missing.
func (d *Domain) child(level, name string) *Domain {
	for _, c := range d.Children {
		if c.Name == name {
			return c
		}
	}
	c := &Domain{Level: level, Name: name}
	d.Children = append(d.Children, c)
	return c
}

func (d *Domain) sort() {
	sort.Slice(d.Children, func(a, b int) bool { return d.Children[a].Name < d.Children[b].Name })
	for _, c := range d.Children {
		c.sort()
	}
}
