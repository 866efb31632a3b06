package server

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// consoleFiles are the operator console's static files: HTML, CSS and plain
// JavaScript modules, served as they are, with no build step.
//
//go:embed console
var consoleFiles embed.FS

// consoleCSP is the console's Content-Security-Policy: everything from the
// server itself, no inline script or style, and no framing by anyone.
const consoleCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// consoleType returns the media type of a console file by its extension;
// a file with any other extension is not served.
func consoleType(name string) (string, bool) {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8", true
	case ".js":
		return "text/javascript; charset=utf-8", true
	case ".css":
		return "text/css; charset=utf-8", true
	}
	return "", false
}

// consoleAsset is one embedded file with its media type and strong ETag.
type consoleAsset struct {
	body        []byte
	contentType string
	etag        string
}

// registerConsoleRoutes serves the console without authentication: the
// page holds no data, and every API call it makes carries the key the
// operator pasted.
func (s *Server) registerConsoleRoutes() {
	assets := loadConsoleAssets()
	s.publicRoute("GET /console", func(w http.ResponseWriter, r *http.Request) error {
		return serveConsoleAsset(w, r, assets, "index.html")
	})
	s.publicRoute("GET /console/{file}", func(w http.ResponseWriter, r *http.Request) error {
		return serveConsoleAsset(w, r, assets, r.PathValue("file"))
	})
	s.publicRoute("GET /{$}", serveRoot)
}

// serveRoot leads a browser from the server's root to the console: a
// request that accepts HTML is redirected to /console. Any other client
// (the API's, which the root offers nothing) gets NOT_FOUND as before.
func serveRoot(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Vary", "Accept")
	if !acceptsHTML(r.Header.Values("Accept")) {
		return canvas.Errorf(canvas.ENOTFOUND, "No route for %s %s; the console is at /console.", r.Method, r.URL.Path)
	}
	w.Header().Set("Cache-Control", "no-cache")
	http.Redirect(w, r, "/console", http.StatusSeeOther)
	return nil
}

// acceptsHTML reports whether Accept header values name text/html with a
// non-zero quality.
func acceptsHTML(values []string) bool {
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			media, params, _ := strings.Cut(item, ";")
			if !strings.EqualFold(strings.TrimSpace(media), "text/html") {
				continue
			}
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
				if ok && strings.EqualFold(k, "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
						q = f
					}
				}
			}
			if q > 0 {
				return true
			}
		}
	}
	return false
}

// loadConsoleAssets reads every servable embedded file once. The files are
// compiled in, so a read error is a broken build and panics.
func loadConsoleAssets() map[string]consoleAsset {
	assets := map[string]consoleAsset{}
	entries, err := fs.ReadDir(consoleFiles, "console")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		ct, ok := consoleType(e.Name())
		if e.IsDir() || !ok {
			continue
		}
		body, err := consoleFiles.ReadFile("console/" + e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(body)
		assets[e.Name()] = consoleAsset{body: body, contentType: ct, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
	}
	return assets
}

// serveConsoleAsset writes one console file with the security headers,
// which every console response carries, errors included.
func serveConsoleAsset(w http.ResponseWriter, r *http.Request, assets map[string]consoleAsset, name string) error {
	h := w.Header()
	h.Set("Content-Security-Policy", consoleCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	a, ok := assets[name]
	if !ok || name == "index.html" && r.URL.Path != "/console" {
		return canvas.Errorf(canvas.ENOTFOUND, "No console file %q.", name)
	}
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	if etagMatches(r.Header.Get("If-None-Match"), a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", a.contentType)
	h.Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(a.body)
	return nil
}
