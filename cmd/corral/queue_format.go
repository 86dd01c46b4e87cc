package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/corral-sched/corral/internal/server/api"
)

// squeueField is one of squeue's -o fields: its header and its value.
type squeueField struct {
	header string
	value  func(j api.Job, now time.Time) string
}

// squeueFields are the -o fields corral queue prints, by letter.
var squeueFields = map[byte]squeueField{
	'i': {"JOBID", func(j api.Job, _ time.Time) string { return arrayOrID(j) }},
	'A': {"JOBID", func(j api.Job, _ time.Time) string { return j.ID }},
	'F': {"ARRAY_JOB_ID", func(j api.Job, _ time.Time) string { return orDash(j.ArrayJob) }},
	'K': {"ARRAY_TASK_ID", func(j api.Job, _ time.Time) string {
		if j.ArrayIndex == nil {
			return "N/A"
		}
		return strconv.Itoa(*j.ArrayIndex)
	}},
	'j': {"NAME", func(j api.Job, _ time.Time) string { return orDash(j.Request.Name) }},
	'u': {"USER", func(j api.Job, _ time.Time) string { return j.Tenant }},
	'a': {"ACCOUNT", func(j api.Job, _ time.Time) string { return j.Tenant }},
	't': {"ST", func(j api.Job, _ time.Time) string { return compactState(j) }},
	'T': {"STATE", func(j api.Job, _ time.Time) string { return slurmState(j.SlurmState, j.State) }},
	'M': {"TIME", func(j api.Job, now time.Time) string { return usedClock(j, now) }},
	'l': {"TIME_LIMIT", func(j api.Job, _ time.Time) string { return timeLimit(j) }},
	'L': {"TIME_LEFT", func(j api.Job, now time.Time) string { return timeLeft(j, now) }},
	'D': {"NODES", func(api.Job, time.Time) string { return "1" }},
	'C': {"CPUS", func(j api.Job, _ time.Time) string {
		return strconv.FormatFloat(max(j.Request.CPU, 0)*float64(max(j.Request.Tasks, 1)), 'g', -1, 64)
	}},
	'b': {"TRES_PER_TASK", func(j api.Job, _ time.Time) string { return "gpu:" + demand(j.Request) }},
	'R': {"NODELIST(REASON)", func(j api.Job, _ time.Time) string {
		if j.State == "running" {
			return "gpus:" + placed(j)
		}
		return "(" + orDash(j.PendingReason) + ")"
	}},
	'r': {"REASON", func(j api.Job, _ time.Time) string { return orDash(j.PendingReason) }},
	'Q': {"PRIORITY", func(j api.Job, _ time.Time) string { return strconv.Itoa(j.Request.Priority) }},
	'P': {"PARTITION", func(j api.Job, _ time.Time) string { return orDash(j.Request.Queue) }},
	'V': {"SUBMIT_TIME", func(j api.Job, _ time.Time) string { return j.Submitted.Local().Format("2006-01-02T15:04:05") }},
	'S': {"START_TIME", func(j api.Job, _ time.Time) string {
		if j.Started == nil {
			return "N/A"
		}
		return j.Started.Local().Format("2006-01-02T15:04:05")
	}},
}

// compactState is squeue's %t: PD, R, CD, F, CA, PR, TO, NF, OOM.
func compactState(j api.Job) string {
	long := slurmState(j.SlurmState, j.State)
	for code, name := range slurmCodes {
		if name == long {
			return code
		}
	}
	return long
}

func usedClock(j api.Job, now time.Time) string {
	if j.Started == nil || j.State == "pending" || j.State == "preempted" {
		return "0:00"
	}
	end := now
	if j.Ended != nil {
		end = *j.Ended
	}
	return clock(end.Sub(*j.Started))
}

func timeLeft(j api.Job, now time.Time) string {
	d, err := time.ParseDuration(j.Request.Time)
	if j.Request.Time == "" || err != nil {
		return "UNLIMITED"
	}
	if j.Started != nil && j.State == "running" {
		d -= now.Sub(*j.Started)
	}
	return clock(max(d, 0))
}

// printFormat prints jobs with squeue's -o format, a header first when
// header.
func printFormat(w io.Writer, format string, jobs []api.Job, header bool, now time.Time) error {
	if header {
		line, err := squeueLine(format, api.Job{}, now, true)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, line)
	}
	for _, j := range jobs {
		line, err := squeueLine(format, j, now)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, line)
	}
	return nil
}

// squeueLine writes one job with format (the headers when header):
// %[.|-][width]letter, other text as it is.
func squeueLine(format string, j api.Job, now time.Time, header ...bool) (string, error) {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		k := i + 1
		right := k < len(format) && format[k] == '.'
		if k < len(format) && (format[k] == '.' || format[k] == '-') {
			k++
		}
		start := k
		for k < len(format) && format[k] >= '0' && format[k] <= '9' {
			k++
		}
		if k >= len(format) {
			return "", fmt.Errorf("-o %q: a %% at the end", format)
		}
		if format[k] == '%' {
			b.WriteByte('%')
			i = k
			continue
		}
		f, ok := squeueFields[format[k]]
		if !ok {
			return "", fmt.Errorf("-o %q: unknown field %%%c; corral queue -h lists the fields", format, format[k])
		}
		v := f.header
		if len(header) == 0 || !header[0] {
			v = f.value(j, now)
		}
		width, _ := strconv.Atoi(format[start:k])
		b.WriteString(fit(v, width, right))
		i = k
	}
	return b.String(), nil
}

// fit pads v to width (on the left when right) and cuts it to width, as
// squeue does; width 0 leaves it as it is.
func fit(v string, width int, right bool) string {
	if width == 0 {
		return v
	}
	if len(v) > width {
		return v[:width]
	}
	pad := strings.Repeat(" ", width-len(v))
	if right {
		return pad + v
	}
	return v + pad
}
