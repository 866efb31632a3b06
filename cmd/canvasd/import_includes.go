package main

import (
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client/promptfile"
)

// includeOrder returns files in dependency order: a canvas after every
// canvas of files its versions include ({{> CANVAS_ID}}), so that what a
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
			for _, m := range v.Messages {
				for _, ref := range canvas.ParseIncludes(m.Content) {
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
