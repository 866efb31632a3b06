package server

import (
	"context"
	"net/http"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
)

// The adapters below build the handlers whose whole job is: read the body or
// a path id, call one service method, answer its result. Each takes the
// service through a getter, so that a server built without an optional
// service answers NOT_FOUND instead of calling a nil service, and the method
// as a method expression, for example (*canvas.Service).GetCanvas.

// withBody decodes the body against the named schema into P, calls op, and
// answers status with op's result.
func withBody[S, P, R any](s *Server, svc func() (S, error), schema string, status int,
	op func(S, context.Context, P) (R, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		service, err := svc()
		if err != nil {
			return err
		}
		var params P
		if err := s.decodeJSON(r, schema, &params); err != nil {
			return err
		}
		res, err := op(service, r.Context(), params)
		if err != nil {
			return err
		}
		writeJSON(w, status, res)
		return nil
	}
}

// withID reads the UUID path parameter name, calls op with it, and answers
// 200 with op's result.
func withID[S, R any](svc func() (S, error), name string, op func(S, context.Context, string) (R, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		res, err := callWithID(r, svc, name, op)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, res)
		return nil
	}
}

// callWithID reads the UUID path parameter name and returns what op
// answers for it on the service svc returns.
func callWithID[S, R any](r *http.Request, svc func() (S, error), name string,
	op func(S, context.Context, string) (R, error)) (R, error) {
	var zero R
	service, err := svc()
	if err != nil {
		return zero, err
	}
	id, err := pathUUID(r, name)
	if err != nil {
		return zero, err
	}
	return op(service, r.Context(), id)
}

// withIDBody reads the UUID path parameter id and the body (validated
// against the named schema) into P, calls op with both, and answers 200
// with op's result. The id is checked first, so that a malformed id is
// reported even when the body is wrong too.
func withIDBody[S, P, R any](s *Server, svc func() (S, error), schema string,
	op func(S, context.Context, string, P) (R, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		service, err := svc()
		if err != nil {
			return err
		}
		id, err := pathUUID(r, "id")
		if err != nil {
			return err
		}
		var params P
		if err := s.decodeJSON(r, schema, &params); err != nil {
			return err
		}
		res, err := op(service, r.Context(), id, params)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, res)
		return nil
	}
}

// deleteID reads the UUID path parameter id, calls op with it, and answers
// 204 with no body.
func deleteID[S any](svc func() (S, error), op func(S, context.Context, string) error) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		service, err := svc()
		if err != nil {
			return err
		}
		id, err := pathUUID(r, "id")
		if err != nil {
			return err
		}
		if err := op(service, r.Context(), id); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// deleteForced is deleteID for deletions of what other canvases may
// include: the query parameter force (a boolean, false by default) is
// passed on as canvas.DeleteOptions.
func deleteForced[S any](svc func() (S, error), op func(S, context.Context, string, ...canvas.DeleteOptions) error) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := newQuery(r)
		force := q.Bool("force", false)
		if err := q.Err(); err != nil {
			return err
		}
		return deleteID(svc, func(s S, ctx context.Context, id string) error {
			return op(s, ctx, id, canvas.DeleteOptions{Force: force})
		})(w, r)
	}
}

// canvasService returns the canvas service, which every server has.
func (s *Server) canvasService() (*canvas.Service, error) { return s.canvases, nil }

// envService returns the environment service, which every server has.
func (s *Server) envService() (*env.Service, error) { return s.environments, nil }
