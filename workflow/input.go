package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"mime"
	"path"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/vault"
)

// span returns the nodes of a partial run, the nodes both reachable from
// startID and leading to endID (either may be empty: the start node, every
// leaf), or nil for a whole run.
func (w *Workflow) span(startID, endID string) (map[string]bool, error) {
	if startID == "" && endID == "" {
		return nil, nil
	}
	var details []canvas.Detail
	start, end := w.Start, (*CNode)(nil)
	if startID != "" {
		if start = w.Node(startID); start == nil {
			details = append(details, canvas.Detail{Path: "/json/startNodeId", Message: "names no node of the workflow"})
		}
	}
	if endID != "" {
		if end = w.Node(endID); end == nil {
			details = append(details, canvas.Detail{Path: "/json/endNodeId", Message: "names no node of the workflow"})
		}
	}
	if len(details) > 0 {
		return nil, canvas.Invalid("Request failed validation.", details...)
	}
	down := map[string]bool{start.ID: true}
	for _, n := range w.Nodes[start.Seq:] {
		if !down[n.ID] {
			continue
		}
		for _, l := range n.Out {
			down[l.To.ID] = true
		}
	}
	if end == nil {
		return down, nil
	}
	if !down[end.ID] {
		return nil, canvas.Invalid("Request failed validation.",
			canvas.Detail{Path: "/json/endNodeId", Message: "is not reachable from the start node"})
	}
	span := map[string]bool{end.ID: true}
	for i := end.Seq; i >= start.Seq; i-- {
		n := w.Nodes[i]
		if !span[n.ID] {
			continue
		}
		for _, l := range n.In {
			if down[l.From.ID] {
				span[l.From.ID] = true
			}
		}
	}
	return span, nil
}

// runInput checks values against the variables the input node declares
// (VALIDATION naming each missing or ill-typed one under inputPath) and
// returns the run's input: every declared variable, then every other value
// given. The files of file values are named from the vault when files is
// set: a vault:// address of a file the principal's workspace does not
// hold, or whose bytes never arrived, is NOT_FOUND.
func runInput(ctx context.Context, files FileLookup, w *Workflow, values map[string]any, inputPath string) (map[string]InputValue, error) {
	var defs []canvas.Variable
	if w.Start.ActionID == ActionInput {
		defs = InputVariables(w.Start.Node)
	}
	if _, err := model.Render(nil, defs, values); err != nil {
		return nil, rebase(err, "/json/variables", inputPath)
	}
	out := make(map[string]InputValue, len(defs)+len(values))
	for _, d := range defs {
		v := values[d.Name]
		out[d.Name] = InputValue{Name: d.Name, Type: d.Type, Required: d.Required, Value: v, Files: inputFiles(v)}
	}
	for name, v := range values {
		if _, ok := out[name]; ok {
			continue
		}
		out[name] = InputValue{Name: name, Type: kindOf(v), Value: v, Files: inputFiles(v)}
	}
	if files != nil {
		for _, in := range out {
			for i := range in.Files {
				if err := nameFile(ctx, files, &in.Files[i]); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// FileLookup reads the metadata of vault files for the principal of ctx:
// vault.Service.
type FileLookup interface {
	GetFile(ctx context.Context, id string) (*vault.File, error)
}

// nameFile fills the name and type of a vault file from its metadata.
func nameFile(ctx context.Context, files FileLookup, f *InputFile) error {
	id, ok := strings.CutPrefix(f.FileURL, "vault://")
	if !ok {
		return nil
	}
	meta, err := files.GetFile(ctx, id)
	if err != nil {
		return err
	}
	if !meta.Uploaded() {
		return canvas.NotFound("file")
	}
	f.Name, f.MimeType = meta.FileName, meta.MimeType
	return nil
}

// rebase moves the JSON pointers of a VALIDATION error's details from
// prefix from to prefix to.
func rebase(err error, from, to string) error {
	var ce *canvas.Error
	if from == to || !errors.As(err, &ce) || ce.Code != canvas.EINVALID {
		return err
	}
	out := *ce
	out.Details = make([]canvas.Detail, len(ce.Details))
	for i, d := range ce.Details {
		if rest, ok := strings.CutPrefix(d.Path, from); ok {
			d.Path = to + rest
		}
		out.Details[i] = d
	}
	return &out
}

// kindOf is the variable type of an undeclared value.
func kindOf(v any) string {
	switch v.(type) {
	case string:
		return canvas.VariableText
	case bool:
		return canvas.VariableBoolean
	case float64, json.Number, int, int64:
		return canvas.VariableNumber
	}
	if len(inputFiles(v)) > 0 {
		return canvas.VariableFile
	}
	return canvas.VariableJSON
}

// inputFiles lists the files of a file value ({"file_url", "name"?,
// "mime_type"?} or an array of them); none for other values.
func inputFiles(v any) []InputFile {
	var out []InputFile
	add := func(m map[string]any) bool {
		u, _ := m["file_url"].(string)
		if u == "" {
			return false
		}
		f := InputFile{FileURL: u}
		f.Name, _ = m["name"].(string)
		if f.Name == "" {
			f.Name = path.Base(strings.TrimPrefix(u, "vault://"))
		}
		f.MimeType, _ = m["mime_type"].(string)
		if f.MimeType == "" {
			f.MimeType, _ = m["mimeType"].(string)
		}
		if f.MimeType == "" {
			f.MimeType = mime.TypeByExtension(path.Ext(f.Name))
		}
		out = append(out, f)
		return true
	}
	switch v := v.(type) {
	case map[string]any:
		add(v)
	case []any:
		for _, item := range v {
			m, ok := item.(map[string]any)
			if !ok || !add(m) {
				return nil
			}
		}
	}
	if out == nil {
		return []InputFile{}
	}
	return out
}
