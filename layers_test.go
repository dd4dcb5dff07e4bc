package agenta

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxBackEdges is how many uses may run back up the root package's floors
// (issue 19). docs/design.md records the count before and after.
const maxBackEdges = 6

// TestLayers measures the root package's layout, as issue 19 asks.
//
// The graph: one node per non-test .go file of the package; an edge A → B
// when A uses (go/types Info.Uses) an identifier of the package that is
// declared in B, A ≠ B: a function, method, type, field, variable or
// constant. Each edge is counted once, however many uses it stands for.
//
// The floors: the graph's strongly connected components (Tarjan), each
// ordered inside so that as few of its edges as possible point from a file
// to one placed earlier (an exact minimum, by dynamic programming over the
// component's subsets). A file's floor is 0 when it uses no other file and
// otherwise one more than the highest floor among the files it uses along
// edges that follow that order.
//
// A back edge is an edge that runs against that order: it leaves a file
// for one placed above it, so both files are in one cycle. The number of
// back edges is therefore the smallest number of uses that would have to
// go for the package's files to stack one way (the minimum feedback arc
// set of the graph). Every edge inside a cycle is reported too, as a
// stricter upper bound.
//
// Reproduce: go test -run TestLayers -v .
func TestLayers(t *testing.T) {
	g := fileGraph(t, ".")
	back, order := backEdges(g)
	floors := floorsOf(g, order)

	var cyclic int
	comp := components(g)
	for a, uses := range g {
		for b := range uses {
			if comp[a] == comp[b] {
				cyclic++
			}
		}
	}
	edges := 0
	for _, uses := range g {
		edges += len(uses)
	}
	maxFloor := 0
	for _, f := range floors {
		maxFloor = max(maxFloor, f)
	}
	t.Logf("%d files, %d edges, %d floors; %d edges inside cycles; %d back edges (max %d)",
		len(g), edges, maxFloor+1, cyclic, len(back), maxBackEdges)
	for floor := maxFloor; floor >= 0; floor-- {
		var names []string
		for f, fl := range floors {
			if fl == floor {
				names = append(names, f)
			}
		}
		sort.Strings(names)
		t.Logf("floor %2d: %s", floor, strings.Join(names, " "))
	}
	for _, e := range back {
		t.Logf("back edge: %s → %s (uses %s)", e[0], e[1], strings.Join(sample(g[e[0]][e[1]], 4), ", "))
	}
	if len(back) > maxBackEdges {
		t.Errorf("%d uses run back up the root package's floors, want at most %d", len(back), maxBackEdges)
	}
}

// fileGraph parses the non-test files of the package in dir and returns,
// for each file, the files it uses with the names it uses from each.
func fileGraph(t *testing.T, dir string) map[string]map[string]map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	// The standard library comes from its export data; every other import
	// is an empty package, which is enough: only the package's own
	// identifiers make edges, and type errors about the others are ignored.
	std := importer.Default()
	conf := types.Config{
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if first, _, _ := strings.Cut(path, "/"); !strings.Contains(first, ".") {
				return std.Import(path)
			}
			name := path[strings.LastIndex(path, "/")+1:]
			name = strings.TrimPrefix(name, "go-")
			if strings.HasPrefix(name, "v") && strings.Contains(path, ".v") || name == "v2" {
				name = path[:strings.LastIndex(path, "/")]
				name = name[strings.LastIndex(name, "/")+1:]
			}
			name, _, _ = strings.Cut(name, ".")
			pkg := types.NewPackage(path, name)
			pkg.MarkComplete()
			return pkg, nil
		}),
		Error: func(error) {},
	}
	pkg, _ := conf.Check("github.com/agenta-go/agenta", fset, files, info)
	g := map[string]map[string]map[string]bool{}
	for _, f := range files {
		g[filepath.Base(fset.Position(f.Pos()).Filename)] = map[string]map[string]bool{}
	}
	for id, obj := range info.Uses {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		from := filepath.Base(fset.Position(id.Pos()).Filename)
		to := filepath.Base(fset.Position(obj.Pos()).Filename)
		if from == to {
			continue
		}
		if g[from][to] == nil {
			g[from][to] = map[string]bool{}
		}
		g[from][to][obj.Name()] = true
	}
	if os.Getenv("LAYERS_DOT") != "" {
		for a, uses := range g {
			for b := range uses {
				fmt.Printf("%q -> %q\n", a, b)
			}
		}
	}
	return g
}

// components returns each file's strongly connected component (Tarjan).
func components(g map[string]map[string]map[string]bool) map[string]int {
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	comp := map[string]int{}
	next, count := 0, 0
	var visit func(string)
	visit = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range layerKeys(g[v]) {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = count
				if w == v {
					break
				}
			}
			count++
		}
	}
	for _, v := range layerKeys(g) {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	return comp
}

// backEdges orders the files from the bottom (used) up (users) with the
// fewest edges running up, and returns those edges and the order.
func backEdges(g map[string]map[string]map[string]bool) ([][2]string, map[string]int) {
	comp := components(g)
	members := map[int][]string{}
	for _, v := range layerKeys(g) {
		members[comp[v]] = append(members[comp[v]], v)
	}
	// Tarjan numbers components so that a component only uses components
	// with smaller numbers: that is the order between components.
	position := map[string]int{}
	pos := 0
	for c := 0; c < len(members); c++ {
		for _, v := range minFeedbackOrder(g, members[c]) {
			position[v] = pos
			pos++
		}
	}
	var back [][2]string
	for _, a := range layerKeys(g) {
		for _, b := range layerKeys(g[a]) {
			if position[b] > position[a] {
				back = append(back, [2]string{a, b})
			}
		}
	}
	return back, position
}

// minFeedbackOrder orders the files of one component, used before users,
// so that the fewest edges point to a file placed later: an exact
// dynamic program over subsets (the placed prefix), fine up to about 22
// files.
func minFeedbackOrder(g map[string]map[string]map[string]bool, nodes []string) []string {
	n := len(nodes)
	if n == 1 {
		return nodes
	}
	if n > 22 {
		panic(fmt.Sprintf("a cycle of %d files is too large to order exactly", n))
	}
	// uses[i] is the set of nodes that node i uses.
	uses := make([]uint32, n)
	for i, a := range nodes {
		for j, b := range nodes {
			if g[a][b] != nil {
				uses[i] |= 1 << j
			}
		}
	}
	full := uint32(1)<<n - 1
	const inf = 1 << 30
	cost := make([]int32, 1<<n)
	choice := make([]int8, 1<<n)
	for s := uint32(1); s <= full; s++ {
		cost[s] = inf
	}
	for s := uint32(0); s < full; s++ {
		if cost[s] == inf {
			continue
		}
		for i := 0; i < n; i++ {
			if s&(1<<i) != 0 {
				continue
			}
			// Placing i now: its uses of files not yet placed run up.
			c := cost[s] + int32(popcount(uses[i]&^s&^(1<<i)))
			t := s | 1<<i
			if c < cost[t] {
				cost[t], choice[t] = c, int8(i)
			}
		}
	}
	order := make([]string, n)
	for s, k := full, n-1; k >= 0; k-- {
		i := choice[s]
		order[k] = nodes[i]
		s &^= 1 << i
	}
	return order
}

// floorsOf gives each file its floor: 0 when it uses no file placed before
// it, else one more than the highest such file.
func floorsOf(g map[string]map[string]map[string]bool, position map[string]int) map[string]int {
	files := layerKeys(g)
	sort.Slice(files, func(i, j int) bool { return position[files[i]] < position[files[j]] })
	floor := map[string]int{}
	for _, a := range files {
		floor[a] = 0
		for b := range g[a] {
			if position[b] < position[a] {
				floor[a] = max(floor[a], floor[b]+1)
			}
		}
	}
	return floor
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

func popcount(x uint32) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

func layerKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sample(m map[string]bool, n int) []string {
	names := layerKeys(m)
	if len(names) > n {
		names = append(names[:n], "…")
	}
	return names
}
