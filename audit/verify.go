package audit

import "fmt"

// Break is where a workspace's chain is broken: the event at Seq, and why.
type Break struct {
	WorkspaceID string
	Seq         int64
	EventID     string
	Reason      string
}

func (b Break) String() string {
	return fmt.Sprintf("workspace %s: event %d (%s): %s", b.WorkspaceID, b.Seq, b.EventID, b.Reason)
}

// Verifier checks chains of events fed to it workspace by workspace, each
// in the order of its seq. The first event of a workspace is taken on
// trust for its PrevHash (retention may have purged what came before) and
// checked for its own hash; every later one must follow the one before:
// the next seq, its hash as PrevHash, its own hash right.
type Verifier struct {
	// Breaks are the breaks found so far, at most one per workspace (the
	// first: what follows a break cannot be trusted either).
	Breaks []Break
	// Events counts the events checked, Workspaces the chains.
	Events, Workspaces int
	// Heads are the hash of each workspace's last event: an operator who
	// keeps them elsewhere can tell a rewritten tail, which a chain alone
	// cannot.
	Heads map[string]string

	workspace string
	last      *Event
	broken    bool
}

// Add checks the next event.
func (v *Verifier) Add(e *Event) {
	v.Events++
	if v.last == nil || e.WorkspaceID != v.workspace {
		v.Workspaces++
		v.workspace, v.last, v.broken = e.WorkspaceID, nil, false
	}
	if v.broken {
		return
	}
	prev := v.last
	v.last = e
	if v.Heads == nil {
		v.Heads = map[string]string{}
	}
	v.Heads[e.WorkspaceID] = e.Hash
	switch {
	case prev != nil && e.Seq != prev.Seq+1:
		v.fail(e, fmt.Sprintf("follows event %d: events %d to %d are missing", prev.Seq, prev.Seq+1, e.Seq-1))
	case prev != nil && e.PrevHash != prev.Hash:
		v.fail(e, fmt.Sprintf("its prevHash is not the hash of event %d (that event or this one was edited)", prev.Seq))
	case e.ComputeHash() != e.Hash:
		v.fail(e, "its hash does not match its content (the event was edited)")
	}
}

func (v *Verifier) fail(e *Event, reason string) {
	v.broken = true
	v.Breaks = append(v.Breaks, Break{WorkspaceID: e.WorkspaceID, Seq: e.Seq, EventID: e.ID, Reason: reason})
}
