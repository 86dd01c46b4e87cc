package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"
)

// MaxJobFile is the largest job file ParseJobFile reads.
const MaxJobFile = 1 << 20

// ParseJobFile reads a YAML job file: the fields of JobRequest, for
// example
//
//	name: train
//	command: [torchrun, train.py]
//	gpus: 2
//	tasks: 4
//	time: 2h
//
// Unknown fields and a second document are errors; the request is
// validated.
func ParseJobFile(data []byte) (JobRequest, error) {
	var r JobRequest
	if len(data) > MaxJobFile {
		return r, fmt.Errorf("job file: %d bytes, at most %d", len(data), MaxJobFile)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&r); err != nil {
		if errors.Is(err, io.EOF) {
			return r, errors.New("job file: empty")
		}
		return r, fmt.Errorf("job file: %w", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return r, errors.New("job file: more than one YAML document")
	}
	if _, err := r.Validate(); err != nil {
		return r, fmt.Errorf("job file: %w", err)
	}
	if err := CheckSetFields(jobFileFields(data)); err != nil {
		return r, fmt.Errorf("job file: %w", err)
	}
	return r, nil
}

// jobFileFields is the top level of a job file as a map; nil when it is
// not one.
func jobFileFields(data []byte) map[string]any {
	var fields map[string]any
	if yaml.Unmarshal(data, &fields) != nil {
		return nil
	}
	return fields
}

// JobFileSets reports whether a job file sets any of the fields, even to
// a zero value (gpus: 0).
func JobFileSets(data []byte, fields ...string) bool {
	set := jobFileFields(data)
	for _, f := range fields {
		if _, ok := set[f]; ok {
			return true
		}
	}
	return false
}
