package kube

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// lockedBuffer is a bytes.Buffer safe for the scheduler's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) records(t *testing.T) []Record {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Record
	sc := bufio.NewScanner(bytes.NewReader(b.buf.Bytes()))
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("accounting line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestAccountingRecords(t *testing.T) {
	e := newEnv(t)
	e.node("acct-0", 8, nil)
	var out lockedBuffer
	clock := &fakeClock{now: time.Now()}
	cfg := e.config()
	cfg.Accounting, cfg.Now = &out, clock.Now
	e.start(cfg)
	e.podGroup("pair", 2, nil)
	a, b := inGroup(pod("pair-0", 4), "pair"), inGroup(pod("pair-1", 4), "pair")
	e.create(a, b)
	e.waitBound("pair-0", "pair-1")
	// The bindings show before the scheduler writes their start records:
	// wait for those before moving the clock.
	e.eventually(func() error {
		starts := 0
		for _, r := range out.records(t) {
			if r.Event == "start" {
				starts++
			}
		}
		if starts < 2 {
			return errorString("waiting for two start records")
		}
		return nil
	})
	clock.Add(100 * time.Second)
	ctx := context.Background()
	zero := int64(0)
	if err := e.c.Client.CoreV1().Pods(e.ns).Delete(ctx, "pair-0", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	p, err := e.c.Client.CoreV1().Pods(e.ns).Get(ctx, "pair-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodSucceeded
	if _, err := e.c.Client.CoreV1().Pods(e.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var ends map[string]Record
	e.eventually(func() error {
		ends = map[string]Record{}
		for _, r := range out.records(t) {
			if r.Event == "end" {
				ends[r.Pod] = r
			}
		}
		if len(ends) < 2 {
			return errorString("waiting for two end records")
		}
		return nil
	})
	for pod, phase := range map[string]string{"pair-0": "Deleted", "pair-1": "Succeeded"} {
		r := ends[e.ns+"/"+pod]
		if r.Phase != phase || r.GPUs != 4 || r.GPUSeconds != 400 || r.GPUModel != "NVIDIA-H100-80GB-HBM3" || r.Group != e.ns+"/pair" || r.Tenant != e.ns {
			t.Errorf("%s: end record %+v, want phase %s, 4 GPUs for 100 s", pod, r, phase)
		}
	}
	starts, groups := 0, 0
	for _, r := range out.records(t) {
		switch r.Event {
		case "start":
			starts++
		case "group-start":
			groups++
			if r.Pods != 2 {
				t.Errorf("group-start %+v, want 2 pods", r)
			}
		}
	}
	if starts != 2 || groups != 1 {
		t.Errorf("%d start and %d group-start records, want 2 and 1", starts, groups)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
