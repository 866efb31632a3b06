package workflow

import (
	"bytes"
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// SpecPath is the JSON pointer of a workflow specification in the request
// body that saves a version; the details of Compile's errors are under it.
const SpecPath = "/json/workflowSpec"

// MaxNodeNameLength bounds a node's name, in characters.
const MaxNodeNameLength = 256

// nodeIDPattern is what a node id looks like: an identifier, since nodes are
// named steps.<id> in templates and expressions.
var nodeIDPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Compile parses and checks a workflow specification with the actions of
// reg and returns it compiled. Every problem is reported at once, as one
// VALIDATION error whose details carry JSON pointers under
// /json/workflowSpec (for example /json/workflowSpec/nodes/2/id). Members
// the format does not define are ignored. An error of another code means an
// action is broken (its config schema does not compile, or its Compile
// returned no executor).
func Compile(raw json.RawMessage, reg *Registry) (*Workflow, error) {
	if reg == nil {
		reg = NewRegistry()
	}
	c := &compiler{reg: reg}
	spec := c.parse(raw)
	if c.err != nil {
		return nil, c.err
	}
	if spec != nil {
		c.link(spec)
		c.checkStructure()
		c.compileNodes()
		if c.err != nil {
			return nil, c.err
		}
	}
	if len(c.details) > 0 {
		return nil, canvas.Invalid("The workflow specification is invalid.", c.details...)
	}
	return c.workflow(spec), nil
}

// compiler holds the state of one Compile call.
type compiler struct {
	reg     *Registry
	details []canvas.Detail
	// err is a fault of an action, not of the spec.
	err   error
	nodes []*nodeState // in spec order
	index map[string]*nodeState
	start *nodeState
	order []*nodeState // topological; nil when there is a cycle
}

// nodeState is a node being compiled.
type nodeState struct {
	cn   *CNode
	spec Node // as the spec gives it
	path string
	seq  int // spec position
	// linked: the id is valid and unique, so edges can name the node.
	linked bool
	// ready: the node's own fields are valid, so its action may compile it.
	ready bool
	// portsKnown: cn.Ports are the node's ports (edges may be checked
	// against them).
	portsKnown bool
	// secondStart: reported as a start node besides the start.
	secondStart bool
}

func (c *compiler) add(path, format string, args ...any) {
	c.details = append(c.details, canvas.Detail{Path: path, Message: fmt.Sprintf(format, args...)})
}

// parse reads the spec, reporting every malformed member at its pointer. It
// returns nil when the body is not an object with nodes to compile.
func (c *compiler) parse(raw json.RawMessage) *Spec {
	if !json.Valid(raw) {
		c.add(SpecPath, "must be valid JSON")
		return nil
	}
	top, ok := c.object(SpecPath, raw)
	if !ok {
		return nil
	}
	spec := &Spec{}
	if v, ok := c.str(top, "specVersion", SpecPath, true); ok && v != SpecVersion {
		c.add(SpecPath+"/specVersion", "must be %q", SpecVersion)
	} else {
		spec.SpecVersion = v
	}
	spec.TimeoutSeconds = c.timeout(top["timeoutSeconds"], SpecPath+"/timeoutSeconds")
	nodes, nodesOK := c.array(SpecPath+"/nodes", top["nodes"], true)
	if nodesOK && len(nodes) == 0 {
		c.add(SpecPath+"/nodes", "must have at least one node")
	}
	c.index = map[string]*nodeState{}
	for i, n := range nodes {
		ns := c.parseNode(i, n)
		c.nodes = append(c.nodes, ns)
		spec.Nodes = append(spec.Nodes, ns.spec)
	}
	edges, _ := c.array(SpecPath+"/edges", top["edges"], false)
	for j, e := range edges {
		spec.Edges = append(spec.Edges, c.parseEdge(j, e))
	}
	if !nodesOK || len(nodes) == 0 {
		return nil
	}
	return spec
}

func (c *compiler) timeout(raw json.RawMessage, path string) int {
	switch jsonKind(raw) {
	case "null":
		return 0
	case "number":
	default:
		c.add(path, "must be an integer")
		return 0
	}
	maxSeconds := int64(MaxTimeout / 1e9)
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
		whole := (ferr == nil || errors.Is(ferr, strconv.ErrRange)) && f == math.Trunc(f)
		switch {
		case whole && f > float64(maxSeconds):
			c.add(path, "must be at most %d", maxSeconds)
		case whole && f < 0:
			c.add(path, "must be at least 0")
		default:
			c.add(path, "must be an integer")
		}
		return 0
	}
	if n < 0 {
		c.add(path, "must be at least 0")
		return 0
	}
	if n > maxSeconds {
		c.add(path, "must be at most %d", maxSeconds)
		return 0
	}
	return int(n)
}

// parseNode reads node i, checks its own fields and resolves its action,
// config and ports.
func (c *compiler) parseNode(i int, raw json.RawMessage) *nodeState {
	p := fmt.Sprintf("%s/nodes/%d", SpecPath, i)
	ns := &nodeState{cn: &CNode{}, path: p, seq: i}
	obj, ok := c.object(p, raw)
	if !ok {
		return ns
	}
	n := &ns.cn.Node
	id, idOK := c.str(obj, "id", p, true)
	switch {
	case !idOK:
	case id == "":
		c.add(p+"/id", "must not be empty")
		idOK = false
	case !nodeIDPattern.MatchString(id):
		c.add(p+"/id", "must start with a letter or an underscore and hold only letters, digits and underscores")
		idOK = false
	case c.index[id] != nil:
		c.add(p+"/id", "duplicates the id of node %d", c.index[id].seq)
		idOK = false
	default:
		c.index[id] = ns
		ns.linked = true
	}
	n.ID = id
	name, nameOK := c.str(obj, "name", p, false)
	if nameOK && utf8.RuneCountInString(name) > MaxNodeNameLength {
		c.add(p+"/name", "must be at most %d characters", MaxNodeNameLength)
		nameOK = false
	}
	n.Name = name
	actionID, actionOK := c.str(obj, "actionId", p, true)
	n.ActionID = actionID
	if actionOK {
		if ns.cn.Action, actionOK = c.reg.Lookup(actionID); !actionOK {
			c.add(p+"/actionId", "must be a known action: %s", quoteAll(c.reg.IDs()))
		}
	}
	if cfg := obj["config"]; jsonKind(cfg) != "null" {
		n.Config = cfg
	}
	ports, portsOK := c.parsePorts(p+"/ports", obj["ports"])
	n.Ports = ports
	ns.spec = *n
	configOK := actionOK && c.checkConfig(p+"/config", ns.cn.Action, n.Config)
	if len(ports) == 0 && configOK {
		ports = ns.cn.Action.DefaultPorts(configOrEmpty(n.Config))
	}
	n.Ports = make([]Port, len(ports))
	for k, port := range ports {
		if port.Type == "" {
			port.Type = FlowType
		}
		n.Ports[k] = port
	}
	ns.portsKnown = portsOK && (len(ns.spec.Ports) > 0 || configOK)
	ns.ready = idOK && nameOK && configOK && ns.portsKnown
	return ns
}

// parsePorts reads a node's ports; ok is false when any is malformed.
func (c *compiler) parsePorts(path string, raw json.RawMessage) ([]Port, bool) {
	items, ok := c.array(path, raw, false)
	if !ok {
		return nil, false
	}
	var ports []Port
	seen := map[string]int{}
	for k, item := range items {
		pp := fmt.Sprintf("%s/%d", path, k)
		obj, objOK := c.object(pp, item)
		if !objOK {
			ok = false
			continue
		}
		id, idOK := c.str(obj, "id", pp, true)
		if idOK && id == "" {
			c.add(pp+"/id", "must not be empty")
			idOK = false
		} else if first, dup := seen[id]; idOK && dup {
			c.add(pp+"/id", "duplicates the id of port %d", first)
			idOK = false
		} else if idOK {
			seen[id] = k
		}
		dir, dirOK := c.str(obj, "dir", pp, true)
		if dirOK && dir != DirIn && dir != DirOut {
			c.add(pp+"/dir", "must be %q or %q", DirIn, DirOut)
			dirOK = false
		}
		typ, typOK := c.str(obj, "type", pp, false)
		ok = ok && idOK && dirOK && typOK
		ports = append(ports, Port{ID: id, Dir: dir, Type: typ})
	}
	return ports, ok
}

// parseEdge reads edge j; linking it to its nodes waits until every node is
// read.
func (c *compiler) parseEdge(j int, raw json.RawMessage) Edge {
	p := fmt.Sprintf("%s/edges/%d", SpecPath, j)
	var e Edge
	obj, ok := c.object(p, raw)
	if !ok {
		return e
	}
	e.ID, _ = c.str(obj, "id", p, false)
	e.From = c.endpoint(p+"/from", obj["from"])
	e.To = c.endpoint(p+"/to", obj["to"])
	return e
}

func (c *compiler) endpoint(path string, raw json.RawMessage) Endpoint {
	var ep Endpoint
	if jsonKind(raw) == "null" {
		c.add(path, "is required")
		return ep
	}
	obj, ok := c.object(path, raw)
	if !ok {
		return ep
	}
	ep.Node = c.name(obj, "node", path)
	ep.Port = c.name(obj, "port", path)
	return ep
}

// name reads a required, non-empty string member; "" after a detail.
func (c *compiler) name(obj map[string]json.RawMessage, key, path string) string {
	v, ok := c.str(obj, key, path, true)
	if ok && v == "" {
		c.add(path+"/"+key, "must not be empty")
	}
	return v
}

// link checks the edges against the nodes and their ports and links the
// nodes by the edges that connect two distinct nodes. An edge with a
// wrong port still links its nodes, so that one mistake is reported once
// and not again as an unreachable node.
func (c *compiler) link(spec *Spec) {
	seenID := map[string]int{}
	seen := map[Edge]int{}
	for j, e := range spec.Edges {
		p := fmt.Sprintf("%s/edges/%d", SpecPath, j)
		if e.ID != "" {
			if first, dup := seenID[e.ID]; dup {
				c.add(p+"/id", "duplicates the id of edge %d", first)
			} else {
				seenID[e.ID] = j
			}
		}
		from := c.endpointNode(p+"/from", e.From, DirOut)
		to := c.endpointNode(p+"/to", e.To, DirIn)
		if from == nil || to == nil {
			continue
		}
		if from == to {
			c.add(p, "connects node %q to itself", e.From.Node)
			continue
		}
		key := Edge{From: e.From, To: e.To}
		if first, dup := seen[key]; dup {
			c.add(p, "duplicates edge %d", first)
			continue
		}
		seen[key] = j
		l := &Link{From: from.cn, FromPort: e.From.Port, To: to.cn, ToPort: e.To.Port}
		from.cn.Out = append(from.cn.Out, l)
		to.cn.In = append(to.cn.In, l)
	}
}

// endpointNode returns the node an edge's end names, and checks that the
// port is one of its ports with direction dir.
func (c *compiler) endpointNode(path string, ep Endpoint, dir string) *nodeState {
	if ep.Node == "" {
		return nil // reported when read, or a missing node
	}
	ns := c.index[ep.Node]
	if ns == nil {
		c.add(path+"/node", "must name a node: there is no node %q", ep.Node)
		return nil
	}
	if !ns.portsKnown || ep.Port == "" {
		return ns
	}
	i := slices.IndexFunc(ns.cn.Ports, func(p Port) bool { return p.ID == ep.Port })
	switch {
	case i < 0:
		var ids []string
		for _, p := range ns.cn.Ports {
			if p.Dir == dir {
				ids = append(ids, p.ID)
			}
		}
		c.add(path+"/port", "must be an %s port of node %q: %s", dir, ep.Node, quoteAll(ids))
	case ns.cn.Ports[i].Dir != dir:
		c.add(path+"/port", "must be an %s port: %q is an %s port of node %q", dir, ep.Port, ns.cn.Ports[i].Dir, ep.Node)
	}
	return ns
}

// checkStructure finds the start node, orders the nodes topologically and
// checks that the graph is a DAG whose every node the start reaches.
func (c *compiler) checkStructure() {
	var linked, starts []*nodeState
	for _, ns := range c.nodes {
		if !ns.linked {
			continue
		}
		linked = append(linked, ns)
		if len(ns.cn.In) == 0 {
			starts = append(starts, ns)
		}
		if ns.cn.ActionID == ActionInput && len(ns.cn.In) > 0 {
			c.add(ns.path, "must have no incoming edges: an input node is the start of the workflow")
		}
		if ns.cn.ActionID == ActionOutput && len(ns.cn.Out) > 0 {
			c.add(ns.path, "must have no outgoing edges: an output node ends the workflow")
		}
	}
	if len(linked) == 0 {
		return
	}
	if len(starts) == 0 {
		c.add(SpecPath+"/nodes", "must have one start node (a node without incoming edges)")
	} else {
		c.start = starts[0]
		if i := slices.IndexFunc(starts, func(ns *nodeState) bool { return ns.cn.ActionID == ActionInput }); i >= 0 {
			c.start = starts[i]
		}
		for _, ns := range starts {
			if ns != c.start {
				ns.secondStart = true
				c.add(ns.path, "must have an incoming edge: the workflow has one start node, %q", c.start.cn.ID)
			}
		}
	}
	if order := topoSort(linked); len(order) == len(linked) {
		c.order = order
	} else {
		c.add(SpecPath+"/edges", "must not form a cycle: %s", cycle(linked, order))
	}
	if c.start != nil {
		reached := map[*CNode]bool{c.start.cn: true}
		queue := []*CNode{c.start.cn}
		for len(queue) > 0 {
			n := queue[0]
			queue = queue[1:]
			for _, l := range n.Out {
				if !reached[l.To] {
					reached[l.To] = true
					queue = append(queue, l.To)
				}
			}
		}
		for _, ns := range linked {
			if !reached[ns.cn] && !ns.secondStart {
				c.add(ns.path, "must be reachable from the start node %q", c.start.cn.ID)
			}
		}
	}
}

// topoSort orders nodes topologically with Kahn's algorithm, taking the
// ready node first in spec order. When the edges form a cycle it returns
// the nodes it could order before it stalled.
func topoSort(nodes []*nodeState) []*nodeState {
	state := make(map[*CNode]*nodeState, len(nodes))
	indegree := make(map[*CNode]int, len(nodes))
	ready := &seqHeap{}
	for _, ns := range nodes {
		state[ns.cn] = ns
		indegree[ns.cn] = len(ns.cn.In)
		if len(ns.cn.In) == 0 {
			heap.Push(ready, ns)
		}
	}
	order := make([]*nodeState, 0, len(nodes))
	for ready.Len() > 0 {
		ns := heap.Pop(ready).(*nodeState)
		order = append(order, ns)
		for _, l := range ns.cn.Out {
			if indegree[l.To]--; indegree[l.To] == 0 {
				heap.Push(ready, state[l.To])
			}
		}
	}
	return order
}

// cycle names the nodes of one cycle: "a" → "b" → "a". Each node that
// Kahn's algorithm left over (not in ordered) has a predecessor left over,
// so walking back from one of them must come round.
func cycle(nodes, ordered []*nodeState) string {
	done := make(map[*CNode]bool, len(ordered))
	for _, ns := range ordered {
		done[ns.cn] = true
	}
	seq := make(map[*CNode]int, len(nodes))
	for _, ns := range nodes {
		seq[ns.cn] = ns.seq
	}
	var n *CNode
	for _, ns := range nodes {
		if !done[ns.cn] {
			n = ns.cn
			break
		}
	}
	pos := map[*CNode]int{}
	var path []*CNode
	for n != nil {
		if i, seen := pos[n]; seen {
			path = path[i:]
			break
		}
		pos[n] = len(path)
		path = append(path, n)
		var prev *CNode
		for _, l := range n.In {
			if !done[l.From] {
				prev = l.From
				break
			}
		}
		n = prev
	}
	// path runs against the edges; name it along them, from its node
	// first in spec order.
	if len(path) == 0 {
		return ""
	}
	slices.Reverse(path)
	first := 0
	for i, n := range path {
		if seq[n] < seq[path[first]] {
			first = i
		}
	}
	ids := make([]string, 0, len(path)+1)
	for i := range len(path) + 1 {
		ids = append(ids, strconv.Quote(path[(first+i)%len(path)].ID))
	}
	return strings.Join(ids, " → ")
}

// compileNodes has each ready node's action compile it. The node the
// action sees has its name, config and ports filled in.
func (c *compiler) compileNodes() {
	for _, ns := range c.nodes {
		if !ns.ready {
			continue
		}
		n := &ns.cn.Node
		if n.Name == "" {
			n.Name = n.ID
		}
		n.Config = configOrEmpty(n.Config)
		exec, details := ns.cn.Action.Compile(*n)
		for _, d := range details {
			c.details = append(c.details, canvas.Detail{Path: ns.path + d.Path, Message: d.Message})
		}
		if len(details) == 0 && exec == nil {
			c.err = fmt.Errorf("workflow: action %q compiled node %q without an executor", n.ActionID, n.ID)
			return
		}
		ns.cn.Executor = exec
	}
}

// workflow assembles the compiled workflow of a spec that has no problem.
func (c *compiler) workflow(spec *Spec) *Workflow {
	w := &Workflow{
		Spec:    *spec,
		Timeout: DefaultTimeout,
		Start:   c.start.cn,
		index:   make(map[string]*CNode, len(c.order)),
		Graph:   Graph{Nodes: make([]GraphNode, 0, len(c.nodes)), Edges: make([]Edge, 0, len(spec.Edges))},
	}
	if spec.TimeoutSeconds > 0 {
		w.Timeout = timeSeconds(spec.TimeoutSeconds)
	}
	for i, ns := range c.order {
		ns.cn.Seq = i
		w.Nodes = append(w.Nodes, ns.cn)
		w.index[ns.cn.ID] = ns.cn
	}
	for _, ns := range c.nodes {
		n := ns.cn
		w.Graph.Nodes = append(w.Graph.Nodes, GraphNode{ID: n.ID, Name: n.Name, ActionID: n.ActionID,
			Ports: append([]Port{}, n.Ports...)})
	}
	w.Graph.Edges = append(w.Graph.Edges, spec.Edges...)
	return w
}

// object decodes raw as a JSON object; anything else is a detail at path.
func (c *compiler) object(path string, raw json.RawMessage) (map[string]json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if jsonKind(raw) != "object" || json.Unmarshal(raw, &obj) != nil {
		c.add(path, "must be an object")
		return nil, false
	}
	return obj, true
}

// array decodes raw as a JSON array; absent or null is an empty array
// unless required.
func (c *compiler) array(path string, raw json.RawMessage, required bool) ([]json.RawMessage, bool) {
	switch jsonKind(raw) {
	case "null":
		if required {
			c.add(path, "is required")
			return nil, false
		}
		return nil, true
	case "array":
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) == nil {
			return items, true
		}
	}
	c.add(path, "must be an array")
	return nil, false
}

// str reads member key of obj (at path) as a string. Absent or null is ""
// and fine unless required; ok is false after a detail.
func (c *compiler) str(obj map[string]json.RawMessage, key, path string, required bool) (string, bool) {
	raw := obj[key]
	path += "/" + key
	switch jsonKind(raw) {
	case "null":
		if required {
			c.add(path, "is required")
			return "", false
		}
		return "", true
	case "string":
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, true
		}
	}
	c.add(path, "must be a string")
	return "", false
}

// jsonKind returns the type of a valid JSON value by its first byte; an
// absent value is null.
func jsonKind(raw json.RawMessage) string {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return "null"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func timeSeconds(n int) time.Duration { return time.Duration(n) * time.Second }

func configOrEmpty(cfg json.RawMessage) json.RawMessage {
	if jsonKind(cfg) == "null" {
		return json.RawMessage("{}")
	}
	return cfg
}

func quoteAll(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	q := make([]string, len(items))
	for i, it := range items {
		q[i] = strconv.Quote(it)
	}
	return strings.Join(q, ", ")
}

// seqHeap is a min-heap of nodes by spec position.
type seqHeap []*nodeState

func (h seqHeap) Len() int           { return len(h) }
func (h seqHeap) Less(i, j int) bool { return h[i].seq < h[j].seq }
func (h seqHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *seqHeap) Push(x any)        { *h = append(*h, x.(*nodeState)) }
func (h *seqHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
