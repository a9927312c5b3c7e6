// Package money writes dollar amounts with the precision they need: cents
// for most, more digits for what a cent would round away ($0.0002, not
// $0.00). The CLI, the engine's notes and messages use it; the window's
// lib/usage.ts follows the same rule.
package money

import (
	"math"
	"strconv"
	"strings"
)

// tolerance is how far (relative) a shown amount may be from the real one.
const tolerance = 0.005

// maxDecimals bounds the digits after the point ($0.000001).
const maxDecimals = 6

// Decimals is how many digits after the point v needs: at least 2, more
// until the amount shown is within half a percent of v (at most 6).
func Decimals(v float64) int {
	v = math.Abs(v)
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 2
	}
	for d := 2; d < maxDecimals; d++ {
		p := math.Pow10(d)
		if math.Abs(math.Round(v*p)/p-v) <= v*tolerance {
			return d
		}
	}
	return maxDecimals
}

// Format is "$5.00", "$0.42", "$0.0123", "$0.0002".
func Format(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "$" + strconv.FormatFloat(v, 'f', -1, 64)
	}
	d := Decimals(v)
	s := strconv.FormatFloat(math.Abs(v), 'f', d, 64)
	// Digits beyond the cents only where they say something.
	for d > 2 && strings.HasSuffix(s, "0") {
		s, d = s[:len(s)-1], d-1
	}
	if v < 0 && strings.Trim(s, "0.") != "" {
		return "-$" + s
	}
	return "$" + s
}

// Plain is Format without the dollar sign, as a limit is typed: "5",
// "0.0002" (no trailing zeros).
func Plain(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}
