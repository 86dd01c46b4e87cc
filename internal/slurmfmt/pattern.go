package slurmfmt

import (
	"fmt"
	"strconv"
	"strings"
)

// PatternVars are what a file name pattern of sbatch's -o and -e
// expands to: %j the job ID, %x its name, %A the array's job ID, %a the
// task's index, %u the user, %N the host, %n the node (0 on one
// machine), %t the task's rank, %% a percent sign.
type PatternVars struct {
	JobID, Name, ArrayJobID, ArrayIndex, User, Host string
	Rank                                            int
}

// patternLetters are the letters Expand replaces.
const patternLetters = "jxAaunNt%"

// CheckPattern reports what Expand could not expand in p: a letter other
// than those of PatternVars after a %.
func CheckPattern(p string) error {
	_, err := Expand(p, PatternVars{})
	return err
}

// Expand replaces the %-sequences of p with v, as sbatch names its
// output files; a number between % and the letter pads with zeros to
// that width (%4a: 0007). Without an array, %A is the job ID and %a is
// "4294967294", as sbatch writes it.
func Expand(p string, v PatternVars) (string, error) {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] != '%' {
			b.WriteByte(p[i])
			continue
		}
		j := i + 1
		for j < len(p) && p[j] >= '0' && p[j] <= '9' {
			j++
		}
		if j >= len(p) || !strings.ContainsRune(patternLetters, rune(p[j])) {
			return "", fmt.Errorf("%q: %%%s: want one of %%j %%x %%A %%a %%u %%N %%n %%t %%%%", p, p[i+1:min(j+1, len(p))])
		}
		width, _ := strconv.Atoi(p[i+1 : j])
		b.WriteString(pad(patternValue(p[j], v), min(width, 10)))
		i = j
	}
	return b.String(), nil
}

func patternValue(letter byte, v PatternVars) string {
	switch letter {
	case 'j':
		return v.JobID
	case 'x':
		return v.Name
	case 'A':
		if v.ArrayJobID == "" {
			return v.JobID
		}
		return v.ArrayJobID
	case 'a':
		if v.ArrayIndex == "" {
			return "4294967294"
		}
		return v.ArrayIndex
	case 'u':
		return v.User
	case 'N':
		return v.Host
	case 'n':
		return "0"
	case 't':
		return strconv.Itoa(v.Rank)
	}
	return "%"
}

// pad pads a number with zeros on the left to width; other text is
// left as it is.
func pad(s string, width int) string {
	if strings.Trim(s, "0123456789") != "" || len(s) >= width {
		return s
	}
	return strings.Repeat("0", width-len(s)) + s
}
