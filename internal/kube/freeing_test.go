package kube

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// withHostPort gives p's container host port 8080.
func withHostPort(p *corev1.Pod) *corev1.Pod {
	p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
	return p
}

// portPod is p in priority class class, with host port 8080.
func portPod(p *corev1.Pod, class string) *corev1.Pod {
	p = withHostPort(p)
	p.Spec.PriorityClassName = class
	return p
}

// A pod kept off every node by the host port lower-priority pods hold
// evicts the one of lowest priority, as kube-scheduler would, and starts
// in its place; the pod of middle priority stays.
func TestPreemptionFreesAHostPort(t *testing.T) {
	e := newEnv(t)
	e.node("port-0", 8, nil)
	e.node("port-1", 8, nil)
	cfg := e.configNoGrace()
	s, _ := e.start(cfg)
	low, mid := portPod(pod("low", 1), e.priorityClass("port-low", 1)), portPod(pod("mid", 1), e.priorityClass("port-mid", 50))
	high := portPod(pod("high", 1), e.priorityClass("port-high", 100))
	e.create(low, mid)
	before := e.waitBound("low", "mid")
	if before["low"] == before["mid"] {
		t.Fatalf("low and mid both on %s: one host port 8080 a node", before["low"])
	}
	e.create(high)
	got := e.waitBound("high")
	if _, ok := got["low"]; ok {
		t.Errorf("low still exists: %v", got)
	}
	if got["high"] != before["low"] || got["mid"] != before["mid"] {
		t.Errorf("pods on %v, want high where low was (%s) and mid left on %s", got, before["low"], before["mid"])
	}
	if st := s.Stats(); st.Evictions != 1 {
		t.Errorf("stats %+v, want one eviction", st)
	}
}

// A pod that a lower-priority pod's anti-affinity keeps off the only node
// evicts it; the same pod that may not preempt waits and evicts nothing.
func TestPreemptionForAnExistingPodsAntiAffinity(t *testing.T) {
	for _, never := range []bool{false, true} {
		t.Run(map[bool]string{false: "preempts", true: "preemptionPolicy Never"}[never], func(t *testing.T) {
			e := newEnv(t)
			e.node("aa-0", 8, nil)
			cfg := e.configNoGrace()
			s, _ := e.start(cfg)
			loner, web := pod("loner", 1), pod("web", 1)
			loner.Spec.PriorityClassName = e.priorityClass("aa-low", 1)
			loner.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "web"}},
					TopologyKey:   corev1.LabelHostname,
				}},
			}}
			web.Labels["role"] = "web"
			web.Spec.PriorityClassName = e.priorityClass("aa-high", 100)
			if never {
				web.Spec.PriorityClassName = e.politeClass(100)
			}
			e.create(loner)
			e.waitBound("loner")
			e.create(web)
			if never {
				e.waitUnschedulable("web", "anti-affinity")
				time.Sleep(3 * cfg.Interval)
				if got := e.nodesOf(); got["loner"] == "" || got["web"] != "" {
					t.Errorf("pods on %v: want loner kept and web waiting", got)
				}
				if st := s.Stats(); st.Evictions != 0 {
					t.Errorf("stats %+v, want no eviction", st)
				}
				return
			}
			got := e.waitBound("web")
			if _, ok := got["loner"]; ok {
				t.Errorf("loner still exists: %v", got)
			}
		})
	}
}

// A pod group whose two pods each need host port 8080, on two nodes whose
// ports lower-priority pods hold, evicts both holders and starts whole,
// one pod a node.
func TestPreemptionFreesHostPortsForAPodGroup(t *testing.T) {
	e := newEnv(t)
	e.node("gport-0", 8, nil)
	e.node("gport-1", 8, nil)
	cfg := e.configNoGrace()
	s, _ := e.start(cfg)
	low := e.priorityClass("gport-low", 1)
	e.create(portPod(pod("hold-0", 1), low), portPod(pod("hold-1", 1), low))
	e.waitBound("hold-0", "hold-1")
	e.podGroup("web", 2, nil)
	high := e.priorityClass("gport-high", 100)
	e.create(portPod(inGroup(pod("web-0", 1), "web"), high), portPod(inGroup(pod("web-1", 1), "web"), high))
	got := e.waitBound("web-0", "web-1")
	if got["web-0"] == got["web-1"] {
		t.Errorf("both pods of the group on %s, which has one port 8080", got["web-0"])
	}
	for _, n := range []string{"hold-0", "hold-1"} {
		if _, ok := got[n]; ok {
			t.Errorf("%s still exists: %v", n, got)
		}
	}
	if st := s.Stats(); st.Evictions != 2 {
		t.Errorf("stats %+v, want two evictions", st)
	}
}
