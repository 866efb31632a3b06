package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

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
// beyond), parses it (400 when it is not JSON), validates it against the
// named schema of the OpenAPI document (422 listing every problem), and
// unmarshals it into dst.
func (s *Server) decodeJSON(r *http.Request, schema string, dst any) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, s.maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return canvas.Errorf(canvas.EPAYLOADTOOLARGE, "Request body is larger than %d bytes.", s.maxBody)
		}
		return canvas.Errorf(canvas.EBADREQUEST, "Could not read the request body.")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil || dec.More() {
		return canvas.Errorf(canvas.EBADREQUEST, "Request body is not valid JSON.")
	}
	if err := s.schemas.validate(schema, doc); err != nil {
		return err
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return canvas.Invalid("Request body does not match the expected shape.", canvas.Detail{Path: "/json", Message: err.Error()})
	}
	return nil
}
