package faultrec

import "testing"

func TestSummary(t *testing.T) {
	if got := Summary(nil); got != "" {
		t.Errorf("no faults: %q", got)
	}
	rs := []Record{
		{Kind: NodeFailure, Action: Replaced, LostGPUHours: 8, RecoverySeconds: 0.02},
		{Kind: SpotNotice, Action: Requeued, RecoverySeconds: 0.05},
		{Kind: NodeFailure, Action: Requeued, LostGPUHours: 2.5, RecoverySeconds: 1},
	}
	want := "3 stopped or moved by faults (node-failure 2, spot-notice 1): 1 moved to a spare or free node, 2 requeued; 10.5 GPU-hours lost; decided 50ms after the fault (median)"
	if got := Summary(rs); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
