package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// writeJSON writes v as the JSON body with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// decodeJSON reads the request body, bounded by the server's limit (413
// beyond), parses it (400 when it is not JSON), refuses a string that is
// not valid UTF-8 text (422 at its pointer, see invalidText), validates it
// against the named schema of the OpenAPI document (422 listing every
// problem), and unmarshals it into dst. Every JSON body of every route is
// read here, or, for a completion, through readJSON and the same schema
// (decodeCompletion).
func (s *Server) decodeJSON(r *http.Request, schema string, dst any) error {
	body, doc, err := s.readJSON(r)
	if err != nil {
		return err
	}
	if err := s.schemas.validate(schema, doc); err != nil {
		return err
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return canvas.Invalid("Request body failed validation.", unmarshalDetail(err))
	}
	return nil
}

// readJSON reads the request body (readBody; an empty one is {}), parses
// it into the document the schemas validate (numbers as json.Number), 400
// when it is not JSON, and refuses a string that is not valid UTF-8 text
// (422 at its pointer). It returns the body read and its document.
func (s *Server) readJSON(r *http.Request) ([]byte, any, error) {
	body, err := s.readBody(r)
	if err != nil {
		return nil, nil, err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil || dec.More() {
		return nil, nil, canvas.Errorf(canvas.EBADREQUEST, "Request body is not valid JSON.")
	}
	if at, bad := invalidText(body); bad {
		return nil, nil, canvas.Invalid("Request body failed validation.",
			canvas.Detail{Path: "/json" + at, Message: "must be valid UTF-8 text"})
	}
	return body, doc, nil
}

// readBody reads the request body, bounded by the server's limit (413
// beyond), and puts it back in r.Body, so that a handler can look at the
// body before decodeJSON reads it again.
func (s *Server) readBody(r *http.Request) ([]byte, error) {
	if b, ok := r.Body.(*readBody); ok {
		return b.data, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, s.maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, canvas.Errorf(canvas.EPAYLOADTOOLARGE, "Request body is larger than %d bytes.", s.maxBody)
		}
		return nil, canvas.Errorf(canvas.EBADREQUEST, "Could not read the request body.")
	}
	r.Body = &readBody{Reader: bytes.NewReader(body), data: body}
	return body, nil
}

// readBody is a request body already read by Server.readBody.
type readBody struct {
	*bytes.Reader
	data []byte
}

func (*readBody) Close() error { return nil }

// unmarshalDetail names the field a value that passed the schema but does not
// fit its Go type (1.5 for an integer, say) without echoing Go's own text.
func unmarshalDetail(err error) canvas.Detail {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return canvas.Detail{Path: "/json/" + strings.ReplaceAll(typeErr.Field, ".", "/"), Message: "has the wrong type"}
	}
	return canvas.Detail{Path: "/json", Message: "does not match the expected shape"}
}
