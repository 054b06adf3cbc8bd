// Package parentwalk walks the parent links of a forest that may hold cycles, cutting the links that close them: the one rule the library's analyses and the command's span paths share.
package parentwalk

// Walk visits the nodes 0..n-1 for which skip is false (skip may be nil)
// with every parent before its children, without recursion. From each node
// not yet visited, in index order, it follows parent links (parent returns
// -1 for none) until a node already visited, a root, or a node on the
// current walk: the chain has come back to itself, and the link from the
// last node walked to its parent is cut. visit gets each walk's nodes, child
// first (path is reused: copy what you keep), and whether the link from the
// last of them is cut. A node reached only through parent links must not be
// skipped: skip is asked only where a walk starts, so such a node would be
// visited anyway.
func Walk(n int, parent func(int) int, skip func(int) bool, visit func(path []int, cut bool)) {
	const (
		unvisited = iota
		onPath
		done
	)
	state := make([]uint8, n)
	var path []int
	for i := range n {
		if state[i] == done || skip != nil && skip(i) {
			continue
		}
		path = path[:0]
		cut := false
		for j := i; state[j] != done; {
			if state[j] == onPath {
				cut = true
				break
			}
			state[j] = onPath
			path = append(path, j)
			if j = parent(j); j < 0 {
				break
			}
		}
		for _, k := range path {
			state[k] = done
		}
		visit(path, cut)
	}
}
