package kube

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestFaultToDecisionLatency measures, on the real API server with the
// scheduler running as deployed (event-driven cycles), the time from a
// node's NotReady status write to the scheduler's decision (its fault
// record) and to the replacement pod seen bound on the spare, or to the
// gang's copies created when it is requeued. Each trial is a 2-pod gang
// of 8 GPUs packed in a rack of its own. CORRAL_FAULT_TRIALS says how many
// (bench/kube/fault_latency.sh).
func TestFaultToDecisionLatency(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CORRAL_FAULT_TRIALS"))
	if n <= 0 {
		t.Skip("set CORRAL_FAULT_TRIALS (bench/kube/fault_latency.sh)")
	}
	for _, spare := range []bool{true, false} {
		e := newEnv(t)
		acct := &lockedBuffer{}
		cfg := e.config()
		cfg.Accounting, cfg.Interval = acct, 2*time.Second
		e.start(cfg)
		var decided, done []time.Duration
		for i := range n {
			d, b := faultTrial(e, acct, i, spare)
			decided, done = append(decided, d), append(done, b)
		}
		what := "replacement bound on the spare"
		if !spare {
			what = "gang requeued (copies created)"
		}
		fmt.Printf("fault-latency: %d trials, %s: fault->decision %s, fault->%s %s\n", n, map[bool]string{true: "spare", false: "no spare"}[spare],
			quantiles(decided), what, quantiles(done))
	}
}

// faultTrial runs one trial and returns the times from the fault to the
// decision and to its outcome seen in the API server.
func faultTrial(e *env, acct *lockedBuffer, i int, spare bool) (decided, done time.Duration) {
	e.t.Helper()
	rack := fmt.Sprintf("t%d", i)
	if !spare {
		rack = fmt.Sprintf("u%d", i)
	}
	nodes := []string{rack + "-a", rack + "-b"}
	for _, n := range nodes {
		e.node(n, 8, map[string]string{"corral.test/rack": rack})
	}
	if spare {
		e.node(rack+"-s", 8, map[string]string{"corral.test/rack": rack, "corral.sh/spare": "true"})
	}
	group := "g-" + rack
	e.podGroup(group, 2, map[string]string{AnnotationPack: "rack"})
	e.create(inGroup(pod(group+"-0", 8), group), inGroup(pod(group+"-1", 8), group))
	failed := e.waitBound(group+"-0", group+"-1")[group+"-1"]
	before := len(acct.faults(e.t))
	start := time.Now()
	e.setReady(failed, false)
	want := group + "-1-r1"
	for {
		if p, err := e.c.Client.CoreV1().Pods(e.ns).Get(context.Background(), want, metav1.GetOptions{}); err == nil && (!spare || p.Spec.NodeName != "") {
			done = time.Since(start)
			break
		}
		if time.Since(start) > 30*time.Second {
			e.t.Fatalf("trial %d: no %s after 30 s", i, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
	e.eventually(func() error {
		if len(acct.faults(e.t)) == before {
			return fmt.Errorf("trial %d: no fault record", i)
		}
		return nil
	})
	rec := acct.faults(e.t)[before]
	if !spare { // the requeued gang would take the next trial's rack
		for _, name := range []string{group + "-0-r1", group + "-1-r1"} {
			e.deletePod(name)
		}
	}
	return rec.Time.Sub(start), done
}

// quantiles writes the median, 90th percentile and maximum.
func quantiles(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	q := func(f float64) time.Duration { return s[min(len(s)-1, int(f*float64(len(s))))] }
	return fmt.Sprintf("p50 %s p90 %s max %s", q(0.5).Round(time.Millisecond), q(0.9).Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond))
}
