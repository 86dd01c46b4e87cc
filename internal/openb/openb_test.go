package openb

import (
	"github.com/corral-sched/corral/internal/placement"
	"strings"
	"testing"
)

func TestReadNodes(t *testing.T) {
	in := "sn,cpu_milli,memory_mib,gpu,model\nn1,96000,393216,8,G2\nn2,32000,131072,0,\n"
	nodes, err := ReadNodes(strings.NewReader(in), "nodes.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := []placement.Node{
		{Name: "n1", CPUMilli: 96000, MemoryMiB: 393216, GPUs: 8, Model: "G2"},
		{Name: "n2", CPUMilli: 32000, MemoryMiB: 131072},
	}
	if len(nodes) != len(want) {
		t.Fatalf("got %d nodes, want %d", len(nodes), len(want))
	}
	for i := range want {
		if nodes[i] != want[i] {
			t.Errorf("node %d = %+v, want %+v", i, nodes[i], want[i])
		}
	}
}

func TestReadPodsBothForms(t *testing.T) {
	long := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n" +
		"p1,6000,12288,1,460,V100M16|V100M32|V100M16,LS,Running,0,100,0\n" +
		"p2,12000,16384,2,1000,,BE,Pending,5,,\n"
	short := "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,6000,12288,1,460\np3,8000,0,0,0\n"
	pods, err := ReadPods(strings.NewReader(long), "long.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 2 || pods[0].ModelSpec() != "V100M16|V100M32" || !pods[0].IsShare() || pods[1].TotalGPUMilli() != 2000 {
		t.Fatalf("long form parsed as %+v", pods)
	}
	if !pods[0].Allows("V100M32") || pods[0].Allows("T4") || !pods[1].Allows("T4") {
		t.Error("gpu_spec is not an allowed-model set")
	}
	pods, err = ReadPods(strings.NewReader(short), "short.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 2 || pods[1].IsGPU() || len(pods[0].Models) != 0 {
		t.Fatalf("short form parsed as %+v", pods)
	}
}

func TestReadRejectsMalformedRows(t *testing.T) {
	header := "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
	cases := []struct {
		name, input, want string
	}{
		{"wrong header", "name,cpu,memory,gpus,milli\np,1,1,0,0\n", "pods.csv:1: header"},
		{"too few fields", header + "p1,1000,10,1,500\np2,1000,10,1\n", "pods.csv:3: 4 fields, want 5"},
		{"not a number", header + "p1,lots,10,1,500\n", `pods.csv:2: cpu_milli "lots" is not an integer`},
		{"negative cpu", header + "p1,-5,10,0,0\n", "pods.csv:2: pod p1: negative cpu_milli"},
		{"milli over 1000", header + "p1,5,10,1,1500\n", "pods.csv:2: pod p1: gpu_milli 1500 outside 0..1000"},
		{"shared multi-GPU", header + "p1,5,10,2,500\n", "pods.csv:2: pod p1: 2 GPUs of 500 milli"},
		{"gpus without milli", header + "p1,5,10,1,0\n", "pods.csv:2: pod p1: num_gpu 1 with gpu_milli 0"},
		{"duplicate name", header + "p1,5,10,0,0\np1,5,10,0,0\n", "pods.csv:3: pod p1 already defined on line 2"},
		{"empty file", "", "pods.csv: empty file"},
		{"unbalanced quote", header + "\"p1,5,10,0,0\n", "pods.csv:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadPods(strings.NewReader(c.input), "pods.csv")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestReadNodesRejectsMalformedRows(t *testing.T) {
	header := "sn,cpu_milli,memory_mib,gpu,model\n"
	cases := []struct{ name, input, want string }{
		{"GPUs without model", header + "n1,1000,10,2,\n", "nodes.csv:2: node n1: 2 GPUs but no GPU model"},
		{"negative memory", header + "n1,1000,-1,0,\n", "nodes.csv:2: node n1: negative memory_mib"},
		{"duplicate", header + "n1,1,1,0,\nn1,1,1,0,\n", "nodes.csv:3: node n1 already defined on line 2"},
		{"missing name", header + ",1,1,0,\n", "nodes.csv:2: node has no name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadNodes(strings.NewReader(c.input), "nodes.csv")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestReadFileErrorsNameThePath(t *testing.T) {
	_, err := ReadPodsFile("/nonexistent/pods.csv")
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/pods.csv") {
		t.Fatalf("error = %v, want the path in it", err)
	}
}

func TestTraceName(t *testing.T) {
	if got := TraceName("/data/openb_pod_list_default.csv"); got != "openb_pod_list_default" {
		t.Errorf("TraceName = %q", got)
	}
}
