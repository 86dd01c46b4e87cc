package main

import (
	"slices"
	"testing"
)

func TestExpandHostlist(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"n3", []string{"n3"}},
		{"n[0-2]", []string{"n0", "n1", "n2"}},
		{"n[0-1,5]", []string{"n0", "n1", "n5"}},
		{"n[08-10],m1", []string{"n08", "n09", "n10", "m1"}},
		{"a1,b[2-3]", []string{"a1", "b2", "b3"}},
		{"(null)", nil},
		{"", nil},
	}
	for _, tt := range tests {
		got, err := expandHostlist(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("expandHostlist(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"n[0-2", "n[3-1]", "n[a-b]"} {
		if got, err := expandHostlist(bad); err == nil {
			t.Errorf("expandHostlist(%q) = %q, want an error", bad, got)
		}
	}
}
