package workflow

import "encoding/json"

// view returns run as the API shows it, with the graph of w enriched by
// the run's steps when w is not nil.
func (s *Service) view(run *Run, w *Workflow) *View {
	v := &View{Summary: *summary(run), Input: run.Input, Steps: make([]*Step, len(run.Steps))}
	if v.Input == nil {
		v.Input = map[string]InputValue{}
	}
	for i, st := range run.Steps {
		c := *st
		if len(c.Input) == 0 {
			c.Input = json.RawMessage("{}")
		}
		if len(c.Output) == 0 {
			c.Output = json.RawMessage("null")
		}
		v.Steps[i] = &c
	}
	if out := outputStep(run, w); out != nil {
		for _, st := range v.Steps {
			if st.ID == out.ID {
				v.Output = st
			}
		}
	}
	if w != nil {
		g := Graph{Nodes: make([]GraphNode, len(w.Graph.Nodes)), Edges: w.Graph.Edges}
		for i, n := range w.Graph.Nodes {
			if st := run.Step(n.ID); st != nil {
				n.Status, n.Output, n.Error = st.Status, st.Output, st.Error
			}
			g.Nodes[i] = n
		}
		if g.Edges == nil {
			g.Edges = []Edge{}
		}
		v.Graph = &g
	}
	return v
}

// outputStep is the run's output: its recorded output step, or, while the
// run goes on and w is known, the last completed leaf step; nil while no
// leaf step has completed.
func outputStep(run *Run, w *Workflow) *Step {
	if run.OutputNodeID != "" {
		return run.Step(run.OutputNodeID)
	}
	if w == nil {
		return nil
	}
	var out *Step
	for _, n := range w.Nodes {
		if st := run.Step(n.ID); st != nil && st.Status == StepCompleted && isLeaf(run, n) {
			out = st
		}
	}
	return out
}

// isLeaf reports whether n ends run's range: a node without outgoing
// edges, or the run's end node.
func isLeaf(run *Run, n *CNode) bool {
	return len(n.Out) == 0 || n.ID == run.EndNodeID
}
