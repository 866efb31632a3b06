package main

import (
	"encoding/json"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client/promptfile"
)

// includeOrder returns files in dependency order: a canvas after every
// canvas of files its versions include ({{> CANVAS_ID}}, in their messages
// or their workflow's llm nodes' messages), so that what a
// version includes is in the database, under its id there, before the
// version is. Canvases that include one another in a cycle keep their
// order among themselves.
func includeOrder(files []*promptfile.Canvas) []*promptfile.Canvas {
	byID := make(map[string]*promptfile.Canvas, len(files))
	for _, f := range files {
		byID[strings.ToLower(f.ID)] = f
	}
	out := make([]*promptfile.Canvas, 0, len(files))
	state := make(map[*promptfile.Canvas]int) // 1 visiting, 2 done
	var visit func(f *promptfile.Canvas)
	visit = func(f *promptfile.Canvas) {
		if state[f] != 0 {
			return
		}
		state[f] = 1
		for _, v := range f.Versions {
			contents := specMessages(v.WorkflowSpec)
			for _, m := range v.Messages {
				contents = append(contents, m.Content)
			}
			for _, content := range contents {
				for _, ref := range canvas.ParseIncludes(content) {
					if dep := byID[ref.CanvasID]; dep != nil && dep != f {
						visit(dep)
					}
				}
			}
		}
		state[f] = 2
		out = append(out, f)
	}
	for _, f := range files {
		visit(f)
	}
	return out
}

// rewriteIncludes returns content with the canvas id of each include
// replaced by the id the canvas has in the database (ids: file id →
// database id), for a canvas that was matched by project and title under
// another id.
func rewriteIncludes(content string, ids map[string]string) string {
	refs := canvas.ParseIncludes(content)
	if len(refs) == 0 {
		return content
	}
	var b strings.Builder
	last := 0
	for _, ref := range refs {
		to, ok := ids[ref.CanvasID]
		if !ok || to == ref.CanvasID {
			continue
		}
		tag := content[ref.Start:ref.End]
		i := strings.Index(strings.ToLower(tag), ref.CanvasID)
		b.WriteString(content[last : ref.Start+i])
		b.WriteString(to)
		last = ref.Start + i + len(ref.CanvasID)
	}
	b.WriteString(content[last:])
	return b.String()
}

// specMessages returns the contents of the messages of a workflow
// specification's llm nodes; a spec that does not decode has none.
func specMessages(spec json.RawMessage) []string {
	var out []string
	_, _ = mapSpecMessages(spec, func(content string) string {
		out = append(out, content)
		return content
	})
	return out
}

// rewriteSpecIncludes returns spec with the includes of its llm nodes'
// messages rewritten as rewriteIncludes does; a spec without a change is
// returned as it is.
func rewriteSpecIncludes(spec json.RawMessage, ids map[string]string) (json.RawMessage, error) {
	return mapSpecMessages(spec, func(content string) string { return rewriteIncludes(content, ids) })
}

// mapSpecMessages returns spec with the content of each message of its llm
// nodes replaced by f's answer, re-encoded only when one changed; a part
// that does not decode as a spec is left for the compiler to report.
func mapSpecMessages(spec json.RawMessage, f func(content string) string) (json.RawMessage, error) {
	if len(spec) == 0 {
		return spec, nil
	}
	var s map[string]json.RawMessage
	var nodes []map[string]json.RawMessage
	if json.Unmarshal(spec, &s) != nil || json.Unmarshal(s["nodes"], &nodes) != nil {
		return spec, nil
	}
	changed := false
	for _, n := range nodes {
		var action string
		_ = json.Unmarshal(n["actionId"], &action)
		var cfg map[string]json.RawMessage
		if action != "llm" || json.Unmarshal(n["config"], &cfg) != nil {
			continue
		}
		var msgs []map[string]json.RawMessage
		if json.Unmarshal(cfg["messages"], &msgs) != nil {
			continue
		}
		nodeChanged := false
		for _, m := range msgs {
			var content string
			if json.Unmarshal(m["content"], &content) != nil {
				continue
			}
			if to := f(content); to != content {
				m["content"], _ = json.Marshal(to)
				nodeChanged = true
			}
		}
		if !nodeChanged {
			continue
		}
		changed = true
		var err error
		if cfg["messages"], err = json.Marshal(msgs); err != nil {
			return nil, err
		}
		if n["config"], err = json.Marshal(cfg); err != nil {
			return nil, err
		}
	}
	if !changed {
		return spec, nil
	}
	var err error
	if s["nodes"], err = json.Marshal(nodes); err != nil {
		return nil, err
	}
	return json.Marshal(s)
}
