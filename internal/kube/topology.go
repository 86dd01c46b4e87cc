package kube

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/corral-sched/corral/internal/fleet"
)

// Topology is the tree of domains the scheduler builds from a cluster's
// nodes, and which labels made it: what an admin reads before trusting
// it (corral kube-scheduler --print-topology).
type Topology struct {
	Levels []LevelUse `json:"levels"`
	// NVLinkLevel is the level whose domains are NVLink domains, or empty
	// when NVLink ends at the node (no node has a label of the
	// configured one).
	NVLinkLevel string        `json:"nvlinkLevel,omitempty"`
	Tree        *fleet.Domain `json:"tree"`
	// Warnings are domains one label value names under several parents
	// (the tree splits them), and nodes left out.
	Warnings []string `json:"warnings,omitempty"`
}

// LevelUse is one level, its labels and how many nodes each named the
// level's domain of; Unlabelled nodes have none of them.
type LevelUse struct {
	Name       string     `json:"name"`
	Labels     []LabelUse `json:"labels"`
	Unlabelled int        `json:"unlabelled"`
}

// LabelUse is a label and the nodes whose domain it named.
type LabelUse struct {
	Label string `json:"label"`
	Nodes int    `json:"nodes"`
}

// ReadTopology lists the nodes the scheduler would place on (cfg's node
// selector) and describes their topology as DescribeTopology does.
func ReadTopology(ctx context.Context, cs kubernetes.Interface, cfg Config) (*Topology, error) {
	c := cfg.withDefaults()
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: c.NodeSelector.String()})
	if err != nil {
		return nil, fmt.Errorf("topology: list nodes: %w", err)
	}
	nodes := make([]*corev1.Node, len(list.Items))
	for i := range list.Items {
		nodes[i] = &list.Items[i]
	}
	return DescribeTopology(nodes, cfg), nil
}

// DescribeTopology builds the fleet of nodes as the scheduler does and
// returns its tree, the labels each level was read from, and warnings.
func DescribeTopology(nodes []*corev1.Node, cfg Config) *Topology {
	c := cfg.withDefaults()
	f, skipped, _ := buildFleet(nodes, &c, nil)
	t := &Topology{NVLinkLevel: f.NVLinkDomain, Tree: f.Tree()}
	for _, l := range c.Levels {
		t.Levels = append(t.Levels, levelUse(l, nodes))
	}
	t.Warnings = splitDomains(f)
	for _, name := range slices.Sorted(maps.Keys(skipped)) {
		t.Warnings = append(t.Warnings, fmt.Sprintf("node %s left out: %v", name, skipped[name]))
	}
	return t
}

func levelUse(l Level, nodes []*corev1.Node) LevelUse {
	u := LevelUse{Name: l.Name}
	count := map[string]int{}
	for _, n := range nodes {
		if key, _ := l.label(n.Labels); key != "" {
			count[key]++
		} else {
			u.Unlabelled++
		}
	}
	for _, key := range l.Labels {
		u.Labels = append(u.Labels, LabelUse{Label: key, Nodes: count[key]})
	}
	return u
}

// splitDomains names the label values that lie under more than one
// parent domain: the tree holds one domain for each, so a pack at that
// level keeps a gang within one of the parts. Unlabelled nodes ("none")
// and nodes that are an NVLink domain of their own are not named.
func splitDomains(f *fleet.Fleet) []string {
	var out []string
	for l := 1; l < len(f.Levels); l++ {
		parents := map[string]map[string]bool{}
		for _, n := range f.Nodes {
			v := n.Domains[l]
			if v == noDomain || v == n.Name {
				continue
			}
			if parents[v] == nil {
				parents[v] = map[string]bool{}
			}
			parents[v][strings.Join(n.Domains[:l], "/")] = true
		}
		for _, v := range slices.Sorted(maps.Keys(parents)) {
			if p := parents[v]; len(p) > 1 {
				out = append(out, fmt.Sprintf("%s %s lies under %d %s domains (%s): a gang packed at %s stays within one of them",
					f.Levels[l], v, len(p), f.Levels[l-1], strings.Join(slices.Sorted(maps.Keys(p)), ", "), f.Levels[l]))
			}
		}
	}
	return out
}

// WriteText prints the levels with the labels read, then the tree indented
// by level, each domain with its GPUs and nodes. Domains of unlabelled
// nodes ("none") and nodes that are an NVLink domain of their own are
// left out of the tree, their children printed in their place.
func (t *Topology) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "LEVEL\tLABELS (NODES)\tUNLABELLED")
	for _, l := range t.Levels {
		var labels []string
		for _, c := range l.Labels {
			labels = append(labels, fmt.Sprintf("%s (%d)", c.Label, c.Nodes))
		}
		name := l.Name
		if l.Name == t.NVLinkLevel {
			name += " (NVLink)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\n", name, strings.Join(labels, ", "), l.Unlabelled)
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "fleet\t%d GPUs\t%d nodes\n", t.Tree.GPUs, t.Tree.Nodes)
	for _, c := range t.Tree.Children {
		writeDomain(tw, c, 1)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, warn := range t.Warnings {
		if _, err := fmt.Fprintln(w, "warning:", warn); err != nil {
			return err
		}
	}
	return nil
}

func writeDomain(w io.Writer, d *fleet.Domain, depth int) {
	switch {
	case d.Level == fleet.NodeLevel:
		fmt.Fprintf(w, "%snode %s\t%d GPUs\t%s\n", strings.Repeat("  ", depth), d.Name, d.GPUs, d.Model)
		return
	case d.Name == noDomain || (len(d.Children) == 1 && d.Children[0].Level == fleet.NodeLevel && d.Children[0].Name == d.Name):
		depth-- // not printed: its children take its place
	default:
		fmt.Fprintf(w, "%s%s %s\t%d GPUs\t%d nodes\n", strings.Repeat("  ", depth), d.Level, d.Name, d.GPUs, d.Nodes)
	}
	for _, c := range d.Children {
		writeDomain(w, c, depth+1)
	}
}
