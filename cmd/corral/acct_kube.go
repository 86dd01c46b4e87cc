package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/corral-sched/corral/internal/faultrec"
	"github.com/corral-sched/corral/internal/kube"
	"github.com/corral-sched/corral/internal/server/api"
)

// kubeAcct answers corral acct from a Kubernetes cluster's history: the
// accounting log corral kube-scheduler writes. Every pod that ended becomes
// a record in the server's format, so the same table, CSV and hourly
// demand come out of both.
func kubeAcct(path string, asCSV, asJSON, demand bool, stdout io.Writer) error {
	recs, err := readKubeLog(path)
	if err != nil {
		return err
	}
	switch {
	case demand:
		return writeHourlyDemand(stdout, recs)
	case asJSON:
		return json.NewEncoder(stdout).Encode(api.Acct{Records: recs})
	case asCSV:
		return writeRecordsCSV(stdout, recs)
	}
	if err := writeKubeTable(stdout, recs); err != nil {
		return err
	}
	faults, err := kubeFaults(path)
	if line := faultrec.Summary(faults); err == nil && line != "" {
		fmt.Fprintf(stdout, "\nfaults: %s\n", line)
	}
	return err
}

// kubeFaults reads the fault records of a kube-scheduler accounting log
// file (the same records corral sim keeps); none from the log kept in
// ConfigMaps.
func kubeFaults(path string) ([]faultrec.Record, error) {
	if strings.HasPrefix(path, "configmaps:") {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("kube accounting log: %w", err)
	}
	var out []faultrec.Record
	for line := range strings.Lines(string(data)) {
		if !strings.Contains(line, `"event":"`+faultrec.Event+`"`) {
			continue
		}
		var r faultrec.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("%s: fault record: %w", path, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// writeKubeTable writes the pods that ended and GPU-hours by tenant and
// model.
func writeKubeTable(stdout io.Writer, recs []api.Record) error {
	tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "POD\tTENANT\tGROUP\tGPUS\tMODEL\tSTART\tELAPSED\tGPU-HOURS\tSTATE")
	sums := map[[2]string]float64{}
	for _, r := range recs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%g\t%s\t%s\t%s\t%.4f\t%s\n", r.Job, r.Tenant, orDash(r.Name), r.GPUs,
			modelName(r.GPUModel, r.MIGProfile), r.Start.UTC().Format(time.DateTime), r.End.Sub(r.Start).Round(time.Second),
			r.GPUSeconds/3600, r.State)
		sums[[2]string{r.Tenant, modelName(r.GPUModel, r.MIGProfile)}] += r.GPUSeconds
	}
	keys := make([][2]string, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+"\x00"+keys[i][1] < keys[j][0]+"\x00"+keys[j][1] })
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "TENANT\tMODEL\tGPU-HOURS")
	for _, k := range keys {
		fmt.Fprintf(tw, "%s\t%s\t%.4f\n", k[0], k[1], sums[k]/3600)
	}
	return tw.Flush()
}

// readKubeLog reads the pods that ended from a kube-scheduler accounting
// log, in the order they ended.
func readKubeLog(path string) ([]api.Record, error) {
	recs, err := kubeRecords(path)
	if err != nil {
		return nil, err
	}
	var out []api.Record
	for _, r := range recs {
		if r.Event != "end" {
			continue
		}
		start := r.Time.Add(-time.Duration(r.RunSeconds * float64(time.Second)))
		out = append(out, api.Record{Job: r.Pod, Tenant: r.Tenant, Name: r.Group, GPUModel: r.GPUModel, MIGProfile: r.MIGProfile,
			GPUs: r.GPUs, Start: start, End: r.Time, GPUSeconds: r.GPUSeconds, State: r.Phase})
	}
	return out, nil
}

// kubeRecords reads the scheduler's records from a JSON-lines file, or,
// for "configmaps:NAMESPACE/PREFIX", from the log it keeps in the API
// server (--accounting-configmaps), reached through $KUBECONFIG or in
// cluster.
func kubeRecords(path string) ([]kube.Record, error) {
	if at, ok := strings.CutPrefix(path, "configmaps:"); ok {
		rc, err := kube.RESTConfig(kube.ClientOptions{Kubeconfig: os.Getenv("KUBECONFIG")})
		if err != nil {
			return nil, err
		}
		clients, err := kube.NewClients(rc)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return kube.ReadAccounting(ctx, clients.Client, at)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("kube accounting log: %w", err)
	}
	defer f.Close()
	var out []kube.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var r kube.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

func writeRecordsCSV(w io.Writer, recs []api.Record) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"job", "tenant", "name", "gpu_model", "mig_profile", "gpus", "start", "end", "gpu_seconds", "state"})
	for _, r := range recs {
		cw.Write([]string{r.Job, r.Tenant, r.Name, r.GPUModel, r.MIGProfile, strconv.FormatFloat(r.GPUs, 'g', -1, 64),
			r.Start.UTC().Format(time.RFC3339), r.End.UTC().Format(time.RFC3339), strconv.FormatFloat(r.GPUSeconds, 'f', 1, 64), r.State})
	}
	cw.Flush()
	return cw.Error()
}
