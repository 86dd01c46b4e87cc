package burst

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunMakesEverySubmissionOnce(t *testing.T) {
	var calls atomic.Int64
	r, err := Run(100, 8, func(i int) (string, error) {
		calls.Add(1)
		time.Sleep(time.Duration(i%5) * time.Millisecond)
		return fmt.Sprintf("job-%d", i), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 100 {
		t.Fatalf("%d submissions, want 100", calls.Load())
	}
	for i, id := range r.IDs {
		if id != fmt.Sprintf("job-%d", i) {
			t.Fatalf("ID %d is %q", i, id)
		}
	}
	for i := 1; i < len(r.Latency); i++ {
		if r.Latency[i] < r.Latency[i-1] {
			t.Fatalf("latencies not ascending at %d", i)
		}
	}
	if r.Percentile(0.99) < 4*time.Millisecond || r.Percentile(0) > r.Percentile(0.5) {
		t.Errorf("p0 %s, p50 %s, p99 %s", r.Percentile(0), r.Percentile(0.5), r.Percentile(0.99))
	}
	var out strings.Builder
	r.PrintSubmitRows(&out)
	if !strings.Contains(out.String(), "| submit latency p50 / p99 / max |") {
		t.Errorf("rows:\n%s", out.String())
	}
}

func TestRunReportsTheFirstFailure(t *testing.T) {
	var calls atomic.Int64
	_, err := Run(20, 4, func(i int) (string, error) {
		calls.Add(1)
		if i == 7 || i == 13 {
			return "", errors.New("refused")
		}
		return "ok", nil
	})
	if err == nil || err.Error() != "7: refused" {
		t.Fatalf("error %v, want 7: refused", err)
	}
	if calls.Load() != 20 {
		t.Fatalf("%d submissions, want all 20 despite the failures", calls.Load())
	}
}
