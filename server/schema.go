package server

import "net/http"

// schemaSet validates request bodies against the schemas of the OpenAPI
// document.
type schemaSet struct{}

func loadSchemas() (*schemaSet, error) { return &schemaSet{}, nil }

func (s *schemaSet) validate(name string, doc any) error { return nil }

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) error { return nil }
