// devorder.go holds the order the text, HTML and Chrome outputs show devices in: by name, runs of digits by value.

package main

import (
	"cmp"
	"slices"
	"strings"

	"github.com/tracemem/tracemem"
)

// devicesInOrder returns p's devices in naturalCompare order of their
// names: cuda:2 before cuda:10 (the profile lists them in byte order, as
// its JSON must). The profile is not changed.
func devicesInOrder(p *tracemem.MemoryProfile) []tracemem.DeviceMemoryStats {
	return slices.SortedStableFunc(slices.Values(p.ByDevice), func(a, b tracemem.DeviceMemoryStats) int {
		return naturalCompare(a.Device, b.Device)
	})
}

// naturalCompare orders strings by their runs of digits by value and their
// other bytes as bytes; names that tie so (cuda:01 and cuda:1) in byte
// order.
func naturalCompare(a, b string) int {
	x, y := a, b
	for x != "" && y != "" {
		dx, dy := digitRun(x), digitRun(y)
		if dx == 0 || dy == 0 {
			if x[0] != y[0] {
				return cmp.Compare(x[0], y[0])
			}
			x, y = x[1:], y[1:]
			continue
		}
		nx, ny := strings.TrimLeft(x[:dx], "0"), strings.TrimLeft(y[:dy], "0")
		if c := cmp.Or(cmp.Compare(len(nx), len(ny)), strings.Compare(nx, ny)); c != 0 {
			return c
		}
		x, y = x[dx:], y[dy:]
	}
	return cmp.Or(cmp.Compare(len(x), len(y)), strings.Compare(a, b))
}

// digitRun returns the length of the run of ASCII digits s starts with.
func digitRun(s string) int {
	n := 0
	for n < len(s) && '0' <= s[n] && s[n] <= '9' {
		n++
	}
	return n
}
