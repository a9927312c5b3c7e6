package money

import (
	"fmt"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "$0.00"},
		{0.0002, "$0.0002"},
		{0.0004, "$0.0004"},
		{0.00025, "$0.00025"},
		{0.0123, "$0.0123"},
		{0.123456, "$0.123"},
		{0.42, "$0.42"},
		{0.5, "$0.50"},
		{5, "$5.00"},
		{5.12, "$5.12"},
		{20.4, "$20.40"},
		{1234.5678, "$1234.57"},
		{0.0000001, "$0.00"},
		{-0.0002, "-$0.0002"},
	} {
		if got := Format(tc.v); got != tc.want {
			t.Errorf("Format(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// Whatever the amount, what is shown is within half a percent of it (down
// to a millionth of a dollar).
func FuzzFormatPrecise(f *testing.F) {
	for _, v := range []float64{0.0002, 0.0123, 5.12, 999.999, 0.000015} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if v < 1e-5 || v > 1e9 {
			return
		}
		d := Decimals(v)
		if d < 2 || d > maxDecimals {
			t.Fatalf("Decimals(%v) = %d", v, d)
		}
		if d < maxDecimals {
			var shown float64
			_, err := fmt.Sscan(Format(v)[1:], &shown)
			if err != nil {
				t.Fatal(err)
			}
			if diff := shown - v; diff > v*tolerance || -diff > v*tolerance {
				t.Fatalf("Format(%v) = %s: off by %v", v, Format(v), diff)
			}
		}
	})
}
