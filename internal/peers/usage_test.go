package peers

import (
	"bytes"
	"reflect"
	"testing"
	"time"
)

const minute = time.Minute

// hold is a Hold of gpus on node from a to b simulated minutes.
func hold(job, task, node string, gpus int, a, b float64) Hold {
	return Hold{Job: job, Task: task, Node: node, GPUs: gpus, From: time.Duration(a * float64(minute)), To: time.Duration(b * float64(minute))}
}

func TestMeasureHolds(t *testing.T) {
	tests := []struct {
		name                   string
		holds                  []Hold
		tasks                  map[string]int
		allocPct, stranded     float64
		siblingMin             float64
		gangs, whole           int
		firstBin, secondBinGPU float64
	}{
		{name: "a whole node for the whole window is half of two nodes, nothing stranded",
			holds: []Hold{hold("a", "0", "n0", 8, 0, 60)}, tasks: map[string]int{"a": 1},
			allocPct: 50, firstBin: 8, secondBinGPU: 8},
		{name: "half a node for half the window strands its other half for that time",
			holds: []Hold{hold("a", "0", "n0", 4, 0, 30)}, tasks: map[string]int{"a": 1},
			allocPct: 12.5, stranded: 2, firstBin: 4},
		{name: "a task that ends as another starts on its GPUs: no gap, no overlap",
			holds: []Hold{hold("a", "0", "n0", 8, 0, 30), hold("b", "0", "n0", 8, 30, 60)}, tasks: map[string]int{"a": 1, "b": 1},
			allocPct: 50, firstBin: 8, secondBinGPU: 8},
		{name: "work after the window counts in the series, not in the means",
			holds: []Hold{hold("a", "0", "n1", 8, 60, 90)}, tasks: map[string]int{"a": 1},
			allocPct: 0},
		{name: "a gang whose second task is bound ten minutes after its first holds 80 GPU-minutes for its sibling",
			holds: []Hold{hold("g", "0", "n0", 8, 0, 40), hold("g", "1", "n1", 8, 10, 40)}, tasks: map[string]int{"g": 2},
			allocPct: 100 * (8*40 + 8*30) / (16 * 60.0), siblingMin: 80, gangs: 1, whole: 0, firstBin: 8 + 8*20/30.0, secondBinGPU: 16 * 10 / 30.0},
		{name: "a gang bound within the tolerance starts whole",
			holds: []Hold{hold("g", "0", "n0", 8, 0, 30), hold("g", "1", "n1", 8, 0.25, 30)}, tasks: map[string]int{"g": 2},
			allocPct: 100 * (8*30 + 8*29.75) / (16 * 60.0), siblingMin: 2, gangs: 1, whole: 1, firstBin: (8*30 + 8*29.75) / 30},
		{name: "a gang never bound whole is not counted, and holds nothing for siblings it never got",
			holds: []Hold{hold("g", "0", "n0", 8, 0, 30)}, tasks: map[string]int{"g": 2},
			allocPct: 25, firstBin: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := MeasureHolds(tt.holds, 2, 8, tt.tasks, 60*minute, 30*minute)
			if u.AllocatedPct != round2(tt.allocPct) || u.StrandedGPUs != round2(tt.stranded) {
				t.Errorf("allocated %.2f%%, stranded %.2f; want %.2f%%, %.2f", u.AllocatedPct, u.StrandedGPUs, tt.allocPct, tt.stranded)
			}
			if u.SiblingGPUMin != round2(tt.siblingMin) || u.Gangs != tt.gangs || u.GangsWhole != tt.whole {
				t.Errorf("sibling wait %.2f GPU-min, gangs %d whole %d; want %.2f, %d, %d", u.SiblingGPUMin, u.Gangs, u.GangsWhole, tt.siblingMin, tt.gangs, tt.whole)
			}
			if len(u.Series) == 0 || u.Series[0].Allocated != round2(tt.firstBin) {
				t.Errorf("series %+v: want %.2f GPUs in the first bin", u.Series, tt.firstBin)
			}
			if tt.secondBinGPU > 0 && (len(u.Series) < 2 || u.Series[1].Allocated != round2(tt.secondBinGPU)) {
				t.Errorf("series %+v: want %.2f GPUs in the second bin", u.Series, tt.secondBinGPU)
			}
		})
	}
}

func TestMeterSetThenAdvanceCountsTheStateSinceThePreviousAdvance(t *testing.T) {
	m := NewMeter(1, 8, time.Hour, time.Hour)
	m.Set(0, 8) // as a model's fleet after its first event at 0
	m.Advance(0)
	m.Set(0, 8) // the state during [0, 30m), shown at 30m
	m.Advance(30 * minute)
	m.Set(0, 0)
	m.Advance(time.Hour)
	if u := m.Usage(); u.AllocatedPct != 50 {
		t.Errorf("allocated %.2f%%, want 50%%", u.AllocatedPct)
	}
}

func TestHoldsRoundTrip(t *testing.T) {
	in := []Hold{hold("job-1", "0", "kwok-gpu-0", 8, 0.5, 12.25), hold("job,2", "1", "n3", 0, 3, 3)}
	var buf bytes.Buffer
	if err := WriteHolds(&buf, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadHolds(&buf, "holds.csv")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Errorf("read back %+v, want %+v", out, in)
	}
}

func TestReadHoldsRefusesBadRows(t *testing.T) {
	for name, text := range map[string]string{
		"no header":          "a,0,n0,8,0,1\n",
		"negative gpus":      "job,task,node,gpus,from_s,to_s\na,0,n0,-1,0,1\n",
		"ends before starts": "job,task,node,gpus,from_s,to_s\na,0,n0,8,5,1\n",
		"not seconds":        "job,task,node,gpus,from_s,to_s\na,0,n0,8,soon,1\n",
	} {
		if _, err := ReadHolds(bytes.NewBufferString(text), "h.csv"); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
}
