package workload

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/corral-sched/corral/internal/job"
)

func readTimedFile(t *testing.T, path string) []TimedPod {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pods, err := ReadOpenbTimed(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

func TestFromOpenbTiny(t *testing.T) {
	pods := readTimedFile(t, "testdata/tiny_pods.csv")
	w, skipped, err := FromOpenb(pods, OpenbOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		name        string
		at, dur     time.Duration
		tenant      string
		preemptible bool
		demand      job.Demand
	}
	want := []row{
		{"tiny-share", 0, 600 * time.Second, "BE", true,
			job.Demand{GPUMilli: 460, CPUMilli: 6000, MemoryMiB: 12288, Models: []string{"V100M16", "V100M32"}}},
		{"tiny-cpu", 50 * time.Second, 120 * time.Second, "Burstable", false,
			job.Demand{CPUMilli: 8000, MemoryMiB: 16384}},
		{"tiny-one", 50 * time.Second, 3600 * time.Second, "Guaranteed", false,
			job.Demand{GPUs: 1, CPUMilli: 12000, MemoryMiB: 24576}},
		{"tiny-whole8", 100 * time.Second, 7200 * time.Second, "LS", false,
			job.Demand{GPUs: 8, CPUMilli: 64000, MemoryMiB: 262144}},
	}
	if len(w.Arrivals) != len(want) {
		t.Fatalf("got %d arrivals, want %d", len(w.Arrivals), len(want))
	}
	for i, wa := range want {
		a := w.Arrivals[i]
		got := row{a.Job.Name, a.At, a.Duration, a.Job.Tenant, a.Job.Preemptible, a.Job.Groups[0].Task}
		if !reflect.DeepEqual(got, wa) {
			t.Errorf("arrival %d = %+v, want %+v", i, got, wa)
		}
		if a.Job.Runtime != a.Duration || a.Class != Openb || a.Job.Tasks() != 1 {
			t.Errorf("%s: runtime %v (want the duration %v), class %q, %d tasks", a.Job.Name, a.Job.Runtime, a.Duration, a.Class, a.Job.Tasks())
		}
	}
	wantSkipped := Skipped{NoDeletion: []string{"tiny-open"}, NotAfterStart: []string{"tiny-instant", "tiny-backwards"}}
	if !reflect.DeepEqual(skipped, wantSkipped) {
		t.Errorf("skipped %+v, want %+v", skipped, wantSkipped)
	}
	if s := skipped.String(); !strings.Contains(s, "skipped 3 pods") || !strings.Contains(s, "tiny-backwards") {
		t.Errorf("summary %q names neither the count nor the pods", s)
	}
	if w.Horizon != 7300*time.Second {
		t.Errorf("horizon %v, want 2h1m40s (the last deletion)", w.Horizon)
	}
	if err := w.Validate(); err != nil {
		t.Error(err)
	}
}

func TestFromOpenbOptions(t *testing.T) {
	pods := readTimedFile(t, "testdata/tiny_pods.csv")
	t.Run("open end keeps pods without deletion_time", func(t *testing.T) {
		w, skipped, err := FromOpenb(pods, OpenbOptions{OpenEnd: 1000 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if len(skipped.NoDeletion) != 0 || len(w.Arrivals) != 5 {
			t.Fatalf("kept %d, skipped %v; want 5 kept and tiny-open ended at 1000s", len(w.Arrivals), skipped)
		}
		for _, a := range w.Arrivals {
			if a.Job.Name == "tiny-open" && a.Duration != 800*time.Second {
				t.Errorf("tiny-open runs %v, want 800s (open end 1000s - creation 200s)", a.Duration)
			}
		}
	})
	t.Run("noisy estimates", func(t *testing.T) {
		opt := OpenbOptions{Estimates: Noise{Min: 1, Max: 3}, Seed: 7}
		w1, _, err := FromOpenb(pods, opt)
		if err != nil {
			t.Fatal(err)
		}
		w2, _, _ := FromOpenb(pods, opt)
		if !reflect.DeepEqual(w1, w2) {
			t.Error("same seed, different estimates")
		}
		changed := 0
		for _, a := range w1.Arrivals {
			if a.Job.Runtime < a.Duration || a.Job.Runtime > 3*a.Duration {
				t.Errorf("%s: estimate %v outside [1, 3] x %v", a.Job.Name, a.Job.Runtime, a.Duration)
			}
			if a.Job.Runtime != a.Duration {
				changed++
			}
		}
		if changed == 0 {
			t.Error("noise changed no estimate")
		}
	})
	t.Run("bad noise", func(t *testing.T) {
		if _, _, err := FromOpenb(pods, OpenbOptions{Estimates: Noise{Min: 2, Max: 1}}); err == nil {
			t.Error("accepted an estimate factor range [2, 1]")
		}
	})
}

func TestReadOpenbTimedRejects(t *testing.T) {
	header := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
	cases := []struct{ name, input, want string }{
		{"bad creation", header + "p1,1000,10,0,0,,LS,Running,0,5,0\np2,1000,10,0,0,,LS,Running,soon,5,0\n",
			`pods.csv:3: creation_time "soon" is not a whole number of seconds`},
		{"negative deletion", header + "p1,1000,10,0,0,,LS,Running,0,-5,0\n",
			`pods.csv:2: deletion_time "-5"`},
		{"fractional creation", header + "p1,1000,10,0,0,,LS,Running,1.5,5,0\n",
			`pods.csv:2: creation_time "1.5"`},
		{"short form has no times", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,1000,10,0,0\n",
			"pods.csv:1: 5-column pod list has no creation_time"},
		{"resource errors come from model", header + "p1,1000,10,1,1500,,LS,Running,0,5,0\n",
			"pods.csv:2: pod p1: gpu_milli 1500"},
		{"empty", "", "pods.csv: empty file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadOpenbTimed(strings.NewReader(c.input), "pods.csv")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// traceFile finds a pod list of the shared openb data, or skips.
func traceFile(t *testing.T, name string) string {
	t.Helper()
	for _, dir := range []string{
		"../../../shared/data/alibaba-gpu-v2023", "../../../shared/data",
		"../../shared/data/alibaba-gpu-v2023", "../../shared/data",
	} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skipf("%s not found under shared/data", name)
	return ""
}

func TestOpenbDefaultTrace(t *testing.T) {
	pods := readTimedFile(t, traceFile(t, "openb_pod_list_default.csv"))
	w, skipped, err := FromOpenb(pods, OpenbOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Counts from the file with awk: 8,152 rows, one (openb-pod-7285, a
	// Pending 230-milli share) deleted at its creation time.
	if len(pods) != 8152 || len(w.Arrivals) != 8151 {
		t.Fatalf("%d pods, %d arrivals; want 8152 and 8151", len(pods), len(w.Arrivals))
	}
	if !reflect.DeepEqual(skipped, Skipped{NotAfterStart: []string{"openb-pod-7285"}}) {
		t.Errorf("skipped %v, want only openb-pod-7285", skipped)
	}
	first, last := w.Arrivals[0].At, w.Arrivals[len(w.Arrivals)-1].At
	if first != 0 || last != 12901761*time.Second || w.Horizon != 12902960*time.Second {
		t.Errorf("arrivals %v..%v, horizon %v; want 0..12901761s, 12902960s (about 149 days)", first, last, w.Horizon)
	}
	tenants := map[string]int{}
	kinds := map[job.Kind]int{}
	for _, a := range w.Arrivals {
		tenants[a.Job.Tenant]++
		kinds[a.Job.Groups[0].Task.Kind()]++
	}
	if want := map[string]int{"LS": 4647, "BE": 3397, "Burstable": 100, "Guaranteed": 7}; !reflect.DeepEqual(tenants, want) {
		t.Errorf("tenants %v, want %v", tenants, want)
	}
	if want := map[job.Kind]int{job.Whole: 3986, job.Shared: 3077, job.CPUOnly: 1088}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("demand kinds %v, want %v", kinds, want)
	}
	if err := w.Validate(); err != nil {
		t.Error(err)
	}
}

// The built-in example has no deletion times: every pod is skipped unless
// the caller gives an open end.
func TestOpenbExampleNeedsOpenEnd(t *testing.T) {
	path := "../example/data/example_pods.csv"
	if _, err := os.Stat(path); err != nil {
		t.Skip(err)
	}
	pods := readTimedFile(t, path)
	w, skipped, err := FromOpenb(pods, OpenbOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Arrivals) != 0 || len(skipped.NoDeletion) != len(pods) {
		t.Errorf("%d arrivals, %d skipped for no deletion_time; want 0 and %d", len(w.Arrivals), len(skipped.NoDeletion), len(pods))
	}
	last := pods[len(pods)-1].Created
	w, skipped, err = FromOpenb(pods, OpenbOptions{OpenEnd: last + time.Hour})
	if err != nil || skipped.Total() != 0 || len(w.Arrivals) != len(pods) {
		t.Errorf("with an open end: %d arrivals, skipped %v, error %v; want all %d", len(w.Arrivals), skipped, err, len(pods))
	}
}
