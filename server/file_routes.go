package server

import (
	"net/http"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/vault"
)

// compatibilityHeader is the header that selects, and echoes, the dated
// behaviour of the /v3/files operations.
const compatibilityHeader = "x-compatibility-date"

// registerFileRoutes mounts the file vault. The byte upload is public: its
// signed URL is the credential.
func (s *Server) registerFileRoutes() {
	s.route("POST /v3/files", s.withCompatibility(s.handleCreateFile))
	s.route("GET /v3/files", s.withCompatibility(s.handleListFiles))
	s.route("GET /v3/files/{id}", s.withCompatibility(s.handleGetFile))
	s.route("DELETE /v3/files/{id}", s.withCompatibility(s.handleDeleteFile))
	s.publicRoute("PUT /v3/files/{id}/content", s.handleUploadFile)
}

// filesService returns the vault, or NOT_FOUND when the server was built
// without one.
func (s *Server) filesService() (*vault.Service, error) {
	if s.files == nil {
		return nil, canvas.Errorf(canvas.ENOTFOUND, "Files are not configured on this server.")
	}
	return s.files, nil
}

// withCompatibility resolves the request's x-compatibility-date before h
// runs (400 INVALID_COMPATIBILITY_DATE when it is missing, malformed or too
// early) and echoes the date it used in the response header of the same
// name.
func (s *Server) withCompatibility(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		used, err := vault.ResolveCompatibilityDate(r.Header.Get(compatibilityHeader))
		if err != nil {
			return err
		}
		w.Header().Set(compatibilityHeader, used)
		return h(w, r)
	}
}

// handleCreateFile records a pending file and answers 201 with its upload
// URL.
func (s *Server) handleCreateFile(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.filesService()
	if err != nil {
		return err
	}
	var params vault.CreateFileParams
	if err := s.decodeJSON(r, "CreateFileRequest", &params); err != nil {
		return err
	}
	up, err := svc.CreateFile(r.Context(), params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, up)
	return nil
}

// handleListFiles serves one page of the workspace's files' metadata in the
// pagination envelope, newest first, filtered by status.
func (s *Server) handleListFiles(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.filesService()
	if err != nil {
		return err
	}
	q := newQuery(r)
	params := vault.ListParams{
		Status: q.String("status", false),
		Limit:  q.Int("limit", vault.DefaultListLimit),
		Offset: q.Int("offset", 0),
	}
	objectLinks := q.Bool("objectLinks", false)
	if err := q.Err(); err != nil {
		return err
	}
	if params.Limit == 0 {
		params.Limit = vault.DefaultListLimit
	}
	files, total, err := svc.ListFiles(r.Context(), params)
	if err != nil {
		return err
	}
	var filters []pageParam
	if params.Status != "" {
		filters = append(filters, pageParam{"status", params.Status})
	}
	writeJSON(w, http.StatusOK, newPage(files, total, nil, pageRequest{
		Filters: filters, Limit: params.Limit, Offset: params.Offset, ObjectLinks: objectLinks,
	}))
	return nil
}

// handleGetFile answers a file's metadata.
func (s *Server) handleGetFile(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.filesService()
	if err != nil {
		return err
	}
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	f, err := svc.GetFile(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, f)
	return nil
}

// handleDeleteFile removes a file and its bytes: 204.
func (s *Server) handleDeleteFile(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.filesService()
	if err != nil {
		return err
	}
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	if err := svc.DeleteFile(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleUploadFile takes the bytes sent to a signed upload URL and answers
// 200 with the file's metadata.
func (s *Server) handleUploadFile(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.filesService()
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f, err := svc.Upload(r.Context(), vault.UploadParams{
		ID: r.PathValue("id"), Expires: q.Get("expires"), Signature: q.Get("signature"),
		ContentType: r.Header.Get("Content-Type"), Length: r.ContentLength, Body: r.Body,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, f)
	return nil
}
