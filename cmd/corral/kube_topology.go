package main

import (
	"context"
	"encoding/json"
	"io"

	"github.com/corral-sched/corral/internal/kube"
)

// writeTopology prints the topology the flags' levels read from the
// cluster's nodes (kube.ReadTopology): text, or JSON with -o json.
func (f *kubeSchedulerFlags) writeTopology(ctx context.Context, stdout io.Writer) error {
	cfg, err := f.config()
	if err != nil {
		return err
	}
	rc, err := kube.RESTConfig(kube.ClientOptions{Kubeconfig: f.kubeconfig, QPS: float32(f.qps), Burst: f.burst})
	if err != nil {
		return err
	}
	clients, err := kube.NewClients(rc)
	if err != nil {
		return err
	}
	t, err := kube.ReadTopology(ctx, clients.Client, cfg)
	if err != nil {
		return err
	}
	switch f.output {
	case "text":
		return t.WriteText(stdout)
	case "yaml":
		return writeYAML(stdout, t)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(t)
}
