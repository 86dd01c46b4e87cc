package gang

import (
	"fmt"
	"slices"
	"testing"

	"github.com/corral-sched/corral/internal/job"
)

const trainImage = "nvcr.io/nvidia/pytorch:25.05-py3"

// withImage is gpuJob running trainImage.
func withImage(j *job.Job) *job.Job {
	j.Images = []string{trainImage}
	return j
}

// Among nodes the placement rates alike, a job goes where its image is;
// it never takes a worse-packed node for it; a gang picks the rack whose
// nodes hold it; without images nothing changes.
func TestImagesBreakTies(t *testing.T) {
	tests := []struct {
		name  string
		holds []int    // nodes that hold the image (20 GB)
		busy  [][2]int // node, GPUs already placed there
		job   *job.Job
		want  []string
	}{
		{"a single task goes to the one empty node with its image", []int{6}, nil, withImage(gpuJob("a", 1, 1)), []string{"n006"}},
		{"without images the first node in tree order", []int{6}, nil, gpuJob("a", 1, 1), []string{"n000"}},
		{"where every node holds it, as without", []int{0, 1, 2, 3, 4, 5, 6, 7}, nil, withImage(gpuJob("a", 1, 1)), []string{"n000"}},
		{"a tighter node beats the image", []int{6}, [][2]int{{2, 7}}, withImage(gpuJob("a", 1, 1)), []string{"n002"}},
		{"of two nodes used alike, the one with the image", []int{5}, [][2]int{{1, 7}, {5, 7}}, withImage(gpuJob("a", 1, 1)), []string{"n005"}},
		{"without images the first of them", []int{5}, [][2]int{{1, 7}, {5, 7}}, gpuJob("a", 1, 1), []string{"n001"}},
		{"a gang of two nodes goes to the rack holding its image", []int{4, 5, 6, 7}, nil,
			withImage(gpuJob("g", 2, 8, job.Constraint{Level: "rack", Required: true})), []string{"n004", "n005"}},
		{"a gang prefers a rack where more nodes hold it", []int{0, 5, 6}, nil,
			withImage(gpuJob("g", 2, 8, job.Constraint{Level: "rack", Required: true})), []string{"n005", "n006"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := grid(t, []string{"rack"}, []int{2}, 4, 8, "H100-80GB") // n000-n003 in rack0, n004-n007 in rack1
			for _, n := range tt.holds {
				f.Nodes[n].Images = map[string]int64{trainImage: 20 << 30}
			}
			s := newState(t, f)
			for i, b := range tt.busy {
				j := gpuJob(fmt.Sprintf("busy%d", i), 1, b[1])
				if _, err := s.Adopt(j, f.Nodes[b[0]].Name); err != nil {
					t.Fatal(err)
				}
			}
			p, u := s.Place(tt.job)
			if u != nil {
				t.Fatalf("not placed: %v", u)
			}
			got := nodesOf(p)
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("placed on %v; want %v", got, tt.want)
			}
		})
	}
}

// The state reads nodes' images again once told they changed, and only
// then: what it computed for one job serves the next with the same images.
func TestImagesChangedIsRead(t *testing.T) {
	f := grid(t, []string{"rack"}, []int{1}, 4, 8, "H100-80GB")
	s := newState(t, f)
	place := func(name string) string {
		p, u := s.Place(withImage(gpuJob(name, 1, 8)))
		if u != nil {
			t.Fatalf("%s not placed: %v", name, u)
		}
		return p.Tasks[0].NodeName
	}
	if got := place("first"); got != "n000" {
		t.Fatalf("first on %s; want n000, no node holding its image", got)
	}
	f.Nodes[3].Images = map[string]int64{trainImage: 1 << 30}
	if got := place("second"); got != "n001" {
		t.Errorf("second on %s; want n001: the state was not told the images changed", got)
	}
	s.ImagesChanged()
	if got := place("third"); got != "n003" {
		t.Errorf("third on %s; want n003, which now holds its image", got)
	}
}
