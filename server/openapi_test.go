package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openAPI is the document loaded once for every test of the package.
type openAPI struct {
	doc    *openapi3.T
	router routers.Router
	err    error
}

var (
	openAPIOnce   sync.Once
	openAPILoaded openAPI
)

// loadOpenAPI loads and validates server/openapi.json, the same file the
// server embeds.
func loadOpenAPI(t testing.TB) openAPI {
	t.Helper()
	openAPIOnce.Do(func() {
		o := &openAPILoaded
		raw, err := os.ReadFile("openapi.json")
		if err != nil {
			o.err = err
			return
		}
		loader := openapi3.NewLoader()
		o.doc, o.err = loader.LoadFromData(raw)
		if o.err != nil {
			return
		}
		if o.err = o.doc.Validate(loader.Context); o.err != nil {
			return
		}
		o.router, o.err = gorillamux.NewRouter(o.doc)
	})
	require.NoError(t, openAPILoaded.err, "openapi.json must load and validate")
	return openAPILoaded
}

// validateExchange checks a request and its response against the OpenAPI
// document. The request is checked only when the server accepted it (status
// below 400): tests send invalid requests on purpose to get 400 and 422. The
// response is always checked, status and body, strictly. A request that
// matches no operation of the document is a failure, unless the server
// agreed by answering 404 or 405 with the error body.
func validateExchange(t testing.TB, req *http.Request, reqBody []byte, resp *testResponse) {
	t.Helper()
	o := loadOpenAPI(t)
	ctx := context.Background()
	where := func() string {
		return req.Method + " " + req.URL.RequestURI() + " -> " + http.StatusText(resp.Status) + " (" + strconv.Itoa(resp.Status) + ")"
	}

	// The route is found on a copy of the request whose body can be read
	// again.
	r := req.Clone(ctx)
	r.Body = io.NopCloser(bytes.NewReader(reqBody))
	route, pathParams, err := o.router.FindRoute(r)
	if err != nil {
		if resp.Status == http.StatusNotFound || resp.Status == http.StatusMethodNotAllowed {
			validateErrorBody(t, o, resp, where)
			return
		}
		t.Errorf("openapi: %s: request matches no operation of openapi.json: %v", where(), err)
		return
	}

	input := &openapi3filter.RequestValidationInput{
		Request:    r,
		PathParams: pathParams,
		Route:      route,
		Options: &openapi3filter.Options{
			AuthenticationFunc:    func(context.Context, *openapi3filter.AuthenticationInput) error { return nil },
			IncludeResponseStatus: true,
			MultiError:            true,
		},
	}
	if resp.Status < 400 {
		if err := openapi3filter.ValidateRequest(ctx, input); err != nil {
			t.Errorf("openapi: %s: request does not match openapi.json: %v\nbody: %s", where(), err, reqBody)
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: input,
		Status:                 resp.Status,
		Header:                 resp.Header,
		Options:                input.Options,
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// kin-openapi cannot decode an event stream; the document gives it
		// a string schema, and the tests parse the events themselves.
		opts := *input.Options
		opts.ExcludeResponseBody = true
		out.Options = &opts
	}
	out.SetBodyBytes(resp.Body)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		t.Errorf("openapi: %s: response does not match openapi.json: %v\nbody: %s", where(), err, resp.Body)
	}
}

// validateErrorBody checks the body of an unrouted request's answer against
// the Error schema.
func validateErrorBody(t testing.TB, o openAPI, resp *testResponse, where func() string) {
	t.Helper()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Errorf("openapi: %s: error response is %q, not JSON", where(), resp.Header.Get("Content-Type"))
		return
	}
	var v any
	if err := json.Unmarshal(resp.Body, &v); err != nil {
		t.Errorf("openapi: %s: error body is not JSON: %v", where(), err)
		return
	}
	schema := o.doc.Components.Schemas["Error"].Value
	if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		t.Errorf("openapi: %s: error body does not match the Error schema: %v\nbody: %s", where(), err, resp.Body)
	}
}

// recordingTB collects the failures validateExchange reports, so that the
// validator itself can be tested.
type recordingTB struct {
	testing.TB
	errs []string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestValidateExchange(t *testing.T) {
	const id = "6f1c2a3e-7d5b-4c8a-9e0f-1a2b3c4d5e6f"
	project := `{"id":"` + id + `","name":"p","workspaceId":"` + id + `","createdAt":"2026-01-02T03:04:05Z"}`
	errBody := `{"code":"NOT_FOUND","message":"canvas not found","requestId":"r1"}`
	jsonHeader := http.Header{"Content-Type": {"application/json"}, "Etag": {`"0123456789abcdef0123456789abcdef"`}}
	canvasWith := func(fields string) string {
		return `{"id":"` + id + `","title":"t","projectId":null,"inferencesPercentage":"0","layoutVersion":"v2",` +
			`"workspaceId":"` + id + `","customTags":[],"allowedCredentials":null,"createdBy":"u","updatedBy":"u",` +
			`"deletedBy":null,"createdAt":"2026-01-02T03:04:05Z","updatedAt":"2026-01-02T03:04:05Z","deletedAt":null` + fields + `}`
	}
	page := func(first, next string) string {
		return `{"data":[],"meta":{"totalCount":0,"limit":20,"offset":0,"currentPage":1,"totalPages":0,` +
			`"links":{"first":` + first + `,"last":` + first + `,"next":` + next + `,"previous":null}}}`
	}
	history := "/environment/versions?resourceType=prompt&resourceId=" + id + "&envName=production"

	tests := []struct {
		name     string
		method   string
		path     string
		reqBody  string
		status   int
		respBody string
		wantErr  string // "" when the exchange is valid
	}{
		{"OK", "POST", "/projects", `{"name":"p"}`, 201, project, ""},
		{"ResponseMissingField", "POST", "/projects", `{"name":"p"}`, 201, `{"id":"` + id + `","name":"p"}`, "response does not match"},
		{"ResponseWrongType", "GET", "/projects", "", 200, `{"items":[]}`, "response does not match"},
		{"UndocumentedStatus", "POST", "/projects", `{"name":"p"}`, 202, project, "response does not match"},
		{"InvalidRequestAccepted", "POST", "/projects", `{"name":""}`, 201, project, "request does not match"},
		{"InvalidRequestRejected", "POST", "/projects", `{"name":""}`, 422, `{"code":"VALIDATION","message":"m","details":[{"path":"/json/name","message":"must not be empty"}],"requestId":"r1"}`, ""},
		{"ErrorBodyShape", "GET", "/prompt/" + id, "", 404, `{"error":"not found"}`, "response does not match"},
		{"CanvasOK", "GET", "/prompt/" + id, "", 200, canvasWith(""), ""},
		{"CanvasNullVersions", "GET", "/prompt", "", 200, "[" + canvasWith(`,"promotedVersion":null,"latestVersion":null,"favorited":true`) + "]", ""},
		{"CanvasBadVersion", "GET", "/prompt", "", 200, "[" + canvasWith(`,"promotedVersion":"v1","latestVersion":null`) + "]", "response does not match"},
		{"CanvasNullTags", "GET", "/prompt/" + id, "", 200, strings.Replace(canvasWith(""), `"customTags":[]`, `"customTags":null`, 1), "response does not match"},
		{"CanvasBadProjectID", "GET", "/prompt/" + id, "", 200, strings.Replace(canvasWith(""), `"projectId":null`, `"projectId":5`, 1), "response does not match"},
		{"PageStringLinks", "GET", history, "", 200, page(`"?limit=20&offset=0"`, "null"), ""},
		{"PageObjectLinks", "GET", history + "&objectLinks=true", "", 200, page(`{"limit":20,"offset":0,"envName":"production"}`, `{"limit":20,"offset":20}`), ""},
		{"PageNullFirst", "GET", history, "", 200, page("null", "null"), "response does not match"},
		{"PageMissingQuery", "GET", "/environment/versions?resourceType=prompt", "", 200, page(`""`, "null"), "request does not match"},
		{"UndocumentedRoute", "GET", "/nowhere", "", 200, `{}`, "matches no operation"},
		{"UnroutedAnswered404", "GET", "/nowhere", "", 404, errBody, ""},
		{"UnroutedBadBody", "GET", "/nowhere", "", 404, `{"message":"x"}`, "does not match the Error schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.reqBody != "" {
				body = strings.NewReader(tt.reqBody)
			}
			req, err := http.NewRequest(tt.method, "http://127.0.0.1:1"+tt.path, body)
			require.NoError(t, err)
			if tt.reqBody != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			rec := &recordingTB{TB: t}
			validateExchange(rec, req, []byte(tt.reqBody), &testResponse{Status: tt.status, Header: jsonHeader, Body: []byte(tt.respBody)})
			if tt.wantErr == "" {
				assert.Empty(t, rec.errs)
				return
			}
			require.Len(t, rec.errs, 1, "one failure reported")
			assert.Contains(t, rec.errs[0], tt.wantErr)
		})
	}
}
