package rules

import "strconv"

func formatUint(v uint64) string { return strconv.FormatUint(v, 10) }

func formatFloat(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
