package parentwalk

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestWalk checks on random forests with cycles that every node is visited
// once, parents (through links not cut) before children, that what remains
// after the cuts has no cycle, and that a cut link is one that closes a
// cycle: following parents from its node comes back to it.
func TestWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		n := 1 + rng.IntN(10)
		par := make([]int, n)
		for i := range par {
			par[i] = rng.IntN(n+1) - 1
		}
		parent := func(i int) int { return par[i] }
		pos := make([]int, n)
		for i := range pos {
			pos[i] = -1
		}
		cut := make([]bool, n)
		var seen int
		Walk(n, parent, nil, func(path []int, c bool) {
			for k := len(path) - 1; k >= 0; k-- {
				if pos[path[k]] >= 0 {
					t.Fatalf("parents %v: node %d visited twice", par, path[k])
				}
				pos[path[k]] = seen
				seen++
			}
			if c {
				cut[path[len(path)-1]] = true
			}
		})
		if seen != n {
			t.Fatalf("parents %v: %d nodes visited, want %d", par, seen, n)
		}
		for i, p := range par {
			if p >= 0 && !cut[i] && pos[p] > pos[i] {
				t.Fatalf("parents %v: node %d visited before its parent %d", par, i, p)
			}
			if cut[i] {
				j, back := p, false
				for range n {
					if j == i {
						back = true
						break
					}
					if j < 0 {
						break
					}
					j = par[j]
				}
				if !back {
					t.Fatalf("parents %v: the link from %d is cut but closes no cycle", par, i)
				}
			}
		}
	}
	var got []int
	Walk(4, func(i int) int { return []int{-1, 0, 3, 2}[i] }, func(i int) bool { return i == 1 }, func(path []int, c bool) {
		got = append(got, path...)
		if c != slices.Equal(path, []int{2, 3}) {
			t.Errorf("walk %v cut %v", path, c)
		}
	})
	if !slices.Equal(got, []int{0, 2, 3}) {
		t.Errorf("walks %v, want [0 2 3]: node 1 skipped, the cycle 2 -> 3 -> 2 cut at 3", got)
	}
}

// TestWalkPaths checks the exact walks on small forests: one visit per
// walk from each node not yet visited, in index order, with the nodes that
// walk reached child first, and the cut on the link that closes a cycle.
func TestWalkPaths(t *testing.T) {
	type walk struct {
		Path []int
		Cut  bool
	}
	for _, tc := range []struct {
		name, reason string
		parents      []int
		skip         []int
		want         []walk
	}{
		{"chain leaf first", "one walk reaches the whole chain; the nodes it visited start no walk of their own", []int{1, 2, -1}, nil,
			[]walk{{[]int{0, 1, 2}, false}}},
		{"walks stop at visited nodes", "a walk ends at a node an earlier walk visited, which it does not repeat", []int{-1, 0, 0}, nil,
			[]walk{{[]int{0}, false}, {[]int{1}, false}, {[]int{2}, false}}},
		{"two-cycle", "from node 0 the chain comes back to 0: the link from 1 is cut", []int{1, 0}, nil,
			[]walk{{[]int{0, 1}, true}}},
		{"self-parent", "a node that is its own parent has that link cut", []int{0}, nil,
			[]walk{{[]int{0}, true}}},
		{"tail into a cycle", "the walk from 0 enters the cycle 1 -> 2 -> 1 and the link from 2, the last walked, is cut", []int{1, 2, 1}, nil,
			[]walk{{[]int{0, 1, 2}, true}}},
		{"skipped leaf", "a skipped node starts no walk", []int{-1, 0, 0}, []int{2},
			[]walk{{[]int{0}, false}, {[]int{1}, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []walk
			var skip func(int) bool
			if tc.skip != nil {
				skip = func(i int) bool { return slices.Contains(tc.skip, i) }
			}
			Walk(len(tc.parents), func(i int) int { return tc.parents[i] }, skip, func(path []int, cut bool) {
				got = append(got, walk{slices.Clone(path), cut})
			})
			if !slices.EqualFunc(got, tc.want, func(a, b walk) bool { return a.Cut == b.Cut && slices.Equal(a.Path, b.Path) }) {
				t.Errorf("%s: walks %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}
