package priceimport

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/corral-sched/corral/internal/cost/price"
)

// negotiatedColumns are the columns of a negotiated-rates file; the first
// seven are required, gpu and gpus only for instances the shapes and the
// base catalog do not know.
var negotiatedColumns = []string{"provider", "instance", "region", "capacity", "usd_per_hour", "source", "seen", "valid_until", "gpu", "gpus", "note"}

// negotiated reads a CSV of one's own rates (an enterprise discount, a
// private offer), a header line naming the columns in any order.
func (b *builder) negotiated(data []byte) error {
	r := csv.NewReader(bytes.NewReader(data))
	r.Comment, r.TrimLeadingSpace = '#', true
	header, err := r.Read()
	if err != nil {
		return fmt.Errorf("negotiated rates: want a header line (%s): %w", strings.Join(negotiatedColumns, ","), err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(h))
		if !slices.Contains(negotiatedColumns, h) {
			return fmt.Errorf("line 1: unknown column %q (known: %s)", h, strings.Join(negotiatedColumns, ", "))
		}
		col[h] = i
	}
	for _, need := range negotiatedColumns[:7] {
		if _, ok := col[need]; !ok {
			return fmt.Errorf("line 1: no column %q", need)
		}
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		line, _ := r.FieldPos(0)
		if err := b.negotiatedRow(rec, col); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
	}
}

func (b *builder) negotiatedRow(rec []string, col map[string]int) error {
	get := func(name string) string {
		if i, ok := col[name]; ok && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	c := price.Capacity(get("capacity"))
	if !slices.Contains(price.Capacities, c) {
		return fmt.Errorf("capacity %q: want one of on-demand, spot, reserved-1y, reserved-3y, reserved-block", c)
	}
	usd, err := strconv.ParseFloat(get("usd_per_hour"), 64)
	if err != nil {
		return fmt.Errorf("usd_per_hour %q: want a number", get("usd_per_hour"))
	}
	provider, inst := get("provider"), get("instance")
	s, ok := b.shapeOf(provider, inst, nil)
	if !ok {
		s, ok = awsShapes[inst]
	}
	if !ok {
		s, ok = azureShapes[inst]
	}
	if n, err := strconv.Atoi(get("gpus")); err == nil && get("gpu") != "" {
		s, ok = shape{GPU: get("gpu"), GPUs: n}, true
	}
	if !ok {
		return fmt.Errorf("instance %s: GPU model and count not known; give the gpu and gpus columns", inst)
	}
	q := &price.Quote{USDPerHour: usd, Source: get("source"), Seen: get("seen"), ValidUntil: get("valid_until"), Note: get("note")}
	b.add(provider, inst, get("region"), s, c, q)
	return nil
}
