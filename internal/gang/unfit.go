package gang

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Unfit says why a job was not placed. Nothing was held for it. Like
// Nomad's allocation metrics it counts, per task group, the nodes each
// reason kept from holding a task (Filtered), so that a face words the
// codes as its users know them; Lines and String give the core's words.
type Unfit struct {
	Job string
	// Chosen is the shape the scheduler chose for a job that asked by
	// GPU memory ("asks …: the scheduler chose …"); empty otherwise.
	Chosen string
	// Refused says why the job could not be tried at all: it is placed
	// already, is malformed, or names what the fleet lacks.
	Refused string
	// Groups are the task groups that do not fit; a job of one task
	// shape has one, unnamed.
	Groups []GroupUnfit
	// Apart says, for a gang of several groups that each fit alone,
	// that no domain tried holds them together.
	Apart string
}

// GroupUnfit says why one task group does not fit.
type GroupUnfit struct {
	Group string // empty for a job of one task shape
	// Notes are the room: what it needs against what the fleet or the
	// largest domain has now, or that no placement was found.
	Notes []string
	// Evaluated counts the nodes looked at; Filtered, when the fleet
	// lacks the room, the nodes that hold no task, by reason, most
	// first (then by the core's phrase).
	Evaluated int
	Filtered  []NodeCount
}

// NodeCount is how many nodes one reason kept from holding a task.
// Detail names what the reason is about where known: the taint not
// tolerated for ReasonTaint.
type NodeCount struct {
	Reason Reason
	Detail string
	Nodes  int
}

// Phrase words a node count's reason for one face.
type Phrase func(NodeCount) string

// CorePhrase is the core's wording: the reason's phrase, whatever its
// detail.
func CorePhrase(c NodeCount) string { return c.Reason.String() }

func (u *Unfit) Error() string {
	return fmt.Sprintf("job %s does not fit: %s", u.Job, u.String())
}

// String is the core's reasons joined by "; ".
func (u *Unfit) String() string { return strings.Join(u.Lines(), "; ") }

// Lines are the core's reasons, one sentence each.
func (u *Unfit) Lines() []string { return u.Format(CorePhrase) }

// Format is u's reasons with node counts worded by phrase: counts whose
// phrases are equal are added up, most nodes first.
func (u *Unfit) Format(phrase Phrase) []string {
	if u == nil {
		return nil
	}
	var out []string
	for _, s := range []string{u.Chosen, u.Refused} {
		if s != "" {
			out = append(out, s)
		}
	}
	for _, g := range u.Groups {
		lines := append(slices.Clone(g.Notes), formatCounts(g.Filtered, phrase)...)
		if g.Group == "" {
			out = append(out, lines...)
			continue
		}
		out = append(out, fmt.Sprintf("group %q: %s", g.Group, strings.Join(lines, "; ")))
	}
	if u.Apart != "" {
		out = append(out, u.Apart)
	}
	return out
}

// Filtered adds up u's node counts over its groups, by reason and
// detail, most nodes first.
func (u *Unfit) Filtered() []NodeCount {
	if u == nil {
		return nil
	}
	sum := map[filter]int{}
	for _, g := range u.Groups {
		for _, c := range g.Filtered {
			sum[filter{c.Reason, c.Detail}] += c.Nodes
		}
	}
	return sortedCounts(sum)
}

// formatCounts words counts by phrase, adding up equal phrases.
func formatCounts(counts []NodeCount, phrase Phrase) []string {
	type pc struct {
		p string
		n int
	}
	var list []pc
	for _, c := range counts {
		p := phrase(c)
		if i := slices.IndexFunc(list, func(x pc) bool { return x.p == p }); i >= 0 {
			list[i].n += c.Nodes
		} else {
			list = append(list, pc{p, c.Nodes})
		}
	}
	slices.SortStableFunc(list, func(a, b pc) int { return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.p, b.p)) })
	out := make([]string, len(list))
	for i, x := range list {
		unit := "nodes"
		if x.n == 1 {
			unit = "node"
		}
		out[i] = fmt.Sprintf("%d %s: %s", x.n, unit, x.p)
	}
	return out
}

// sortedCounts lists counts by reason, most nodes first, then by the
// core's phrase and detail.
func sortedCounts(counts map[filter]int) []NodeCount {
	var list []NodeCount
	for f, n := range counts {
		if f.reason != ReasonNone {
			list = append(list, NodeCount{Reason: f.reason, Detail: f.detail, Nodes: n})
		}
	}
	slices.SortFunc(list, func(a, b NodeCount) int {
		return cmp.Or(cmp.Compare(b.Nodes, a.Nodes), strings.Compare(a.Reason.String(), b.Reason.String()), strings.Compare(a.Detail, b.Detail))
	})
	return list
}
