package job

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

var (
	yamlLine     = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	yamlNotFound = regexp.MustCompile(`^field (\S+) not found in type (\S+)$`)
)

// fileSections names the job file's sections by the Go type yaml's
// messages name them by, and holds the type whose fields are known.
var fileSections = map[string]struct {
	what string
	typ  reflect.Type
}{
	"job.fileJob":        {"a job", reflect.TypeFor[fileJob]()},
	"job.fileGroup":      {"a group", reflect.TypeFor[fileGroup]()},
	"job.fileConstraint": {"a topology constraint", reflect.TypeFor[fileConstraint]()},
}

// decodeError rewrites a yaml error of job doc in source as one
// "source:line: job N: problem" line per problem; an unknown field is
// named with the fields its section knows, as fleet files name them.
func decodeError(source string, doc int, err error) error {
	msgs := []string{err.Error()}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	errs := make([]error, len(msgs))
	for i, msg := range msgs {
		at := source
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			at, msg = source+":"+m[1], m[2]
		}
		msg = strings.TrimPrefix(msg, "yaml: ")
		if m := yamlNotFound.FindStringSubmatch(msg); m != nil {
			msg = unknownField(m[1], m[2])
		}
		errs[i] = fmt.Errorf("%s: job %d: %s", at, doc, msg)
	}
	return errors.Join(errs...)
}

func unknownField(field, typeName string) string {
	s, ok := fileSections[typeName]
	if !ok {
		return fmt.Sprintf("unknown field %q", field)
	}
	return fmt.Sprintf("unknown field %q in %s (known: %s)", field, s.what, strings.Join(yamlFields(s.typ), ", "))
}

// yamlFields are the YAML names of t's fields, inline structs' included.
func yamlFields(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opts == "inline" {
			names = append(names, yamlFields(f.Type)...)
			continue
		}
		names = append(names, name)
	}
	return names
}
