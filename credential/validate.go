package credential

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/model"
)

// Bounds of a credential's fields.
const (
	MaxNameLength    = 200
	MaxKeyLength     = 8192
	MaxBaseURLLength = 2048
	MaxProjects      = 100
	MaxHeaders       = 32
	MaxTimeout       = 3600
	MaxConcurrency   = 1000
	// MinHintedKey is the shortest key whose hint shows its last four
	// characters: of a shorter one, four would be too much of it.
	MinHintedKey = 8
)

// Gemini back ends (model.Settings.Backend).
const (
	BackendGeminiAPI = "gemini-api"
	BackendVertex    = "vertex"
)

// keyOptional reports whether a credential of provider may have no key: an
// OpenAI-compatible endpoint (a local model) may need none.
func keyOptional(provider string) bool { return provider == canvas.ProviderOpenAICompatible }

// needsBaseURL reports whether a credential of provider must name its
// endpoint: Azure's is the resource's, a compatible one is anyone's.
func needsBaseURL(provider string) bool {
	return provider == canvas.ProviderAzureOpenAI || provider == canvas.ProviderOpenAICompatible
}

// providerSettings are the settings each provider reads beside the common
// ones (headers, timeoutSeconds, maxConcurrency).
var providerSettings = map[string][]string{
	canvas.ProviderAzureOpenAI: {"apiVersion", "deployment"},
	canvas.ProviderGemini:      {"backend", "project", "location"},
	canvas.ProviderBedrock:     {"region"},
}

var commonSettings = []string{"headers", "timeoutSeconds", "maxConcurrency"}

// keyHeaders are headers that carry a vendor's key: a key goes in apiKey,
// sealed, never in settings, which are not.
var keyHeaders = []string{"authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key",
	"cookie", "host", "content-type", "content-length", "transfer-encoding", "connection"}

// validator collects every problem of one request.
type validator struct{ details []canvas.Detail }

func (v *validator) add(path, format string, args ...any) {
	v.details = append(v.details, canvas.Detail{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) err() error {
	if len(v.details) == 0 {
		return nil
	}
	return canvas.Invalid("Request failed validation.", v.details...)
}

func (v *validator) name(s string) {
	if n := utf8.RuneCountInString(strings.TrimSpace(s)); n == 0 || n > MaxNameLength {
		v.add("/json/name", "must be 1 to %d characters", MaxNameLength)
	}
}

func (v *validator) provider(s string) bool {
	if !canvas.KnownProvider(s) {
		v.add("/json/provider", "must be one of %s", strings.Join(canvas.Providers, ", "))
		return false
	}
	return true
}

func (v *validator) apiKey(s string) {
	if n := utf8.RuneCountInString(s); n == 0 || n > MaxKeyLength || strings.TrimSpace(s) == "" {
		v.add("/json/apiKey", "must be 1 to %d characters, not blank", MaxKeyLength)
	} else if strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		v.add("/json/apiKey", "must not contain control characters")
	}
}

// baseURL checks an endpoint: an absolute http or https URL with a host,
// without user information (a key goes in apiKey) or fragment.
func (v *validator) baseURL(s string) {
	u, err := url.Parse(s)
	switch {
	case len(s) > MaxBaseURLLength:
		v.add("/json/baseUrl", "must be at most %d characters", MaxBaseURLLength)
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		v.add("/json/baseUrl", "must be an absolute http or https URL")
	case u.User != nil:
		v.add("/json/baseUrl", "must not hold a user or password: the key goes in apiKey")
	case u.Fragment != "" || u.RawQuery != "":
		v.add("/json/baseUrl", "must have no query or fragment")
	}
}

// projectIDs checks a list of projects: UUIDs, at least one, no repeats.
func (v *validator) projectIDs(ids []string) {
	if len(ids) == 0 {
		v.add("/json/projectIds", "must name at least one project, or be null for every project")
		return
	}
	if len(ids) > MaxProjects {
		v.add("/json/projectIds", "must name at most %d projects", MaxProjects)
	}
	seen := map[string]bool{}
	for i, id := range ids {
		if uuid.Validate(id) != nil || len(id) != 36 {
			v.add(fmt.Sprintf("/json/projectIds/%d", i), "must be a UUID")
		} else if seen[id] {
			v.add(fmt.Sprintf("/json/projectIds/%d", i), "repeats a project")
		}
		seen[id] = true
	}
}

// settings reads raw (a JSON object, or null for none) strictly into the
// settings of provider: every key must be one that provider reads, of its
// type and within its bounds, and what the provider requires must be
// there. Each problem is noted; the settings are returned as far as they
// could be read.
func (v *validator) settings(provider string, raw json.RawMessage) model.Settings {
	var s model.Settings
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		v.required(provider, s, map[string]bool{})
		return s
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		v.add("/json/settings", "must be an object")
		return s
	}
	allowed := append(slices.Clone(commonSettings), providerSettings[provider]...)
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	present := map[string]bool{}
	for _, k := range keys {
		path := "/json/settings/" + k
		if !slices.Contains(allowed, k) {
			v.add(path, "is not a setting of provider %s (it reads %s)", provider, strings.Join(allowed, ", "))
			continue
		}
		val := fields[k]
		if string(val) == "null" {
			continue
		}
		present[k] = true
		switch k {
		case "headers":
			if json.Unmarshal(val, &s.Headers) != nil {
				v.add(path, "must be an object of strings")
				continue
			}
			v.headers(path, s.Headers)
		case "timeoutSeconds", "maxConcurrency":
			var n int
			limit, dst := MaxTimeout, &s.TimeoutSeconds
			if k == "maxConcurrency" {
				limit, dst = MaxConcurrency, &s.MaxConcurrency
			}
			if json.Unmarshal(val, &n) != nil || n < 1 || n > limit {
				v.add(path, "must be an integer from 1 to %d", limit)
				continue
			}
			*dst = n
		default:
			var str string
			if json.Unmarshal(val, &str) != nil || strings.TrimSpace(str) == "" || len(str) > 256 {
				v.add(path, "must be a string of 1 to 256 characters")
				continue
			}
			switch k {
			case "apiVersion":
				s.APIVersion = str
			case "deployment":
				s.Deployment = str
			case "backend":
				if str != BackendGeminiAPI && str != BackendVertex {
					v.add(path, "must be %s or %s", BackendGeminiAPI, BackendVertex)
					continue
				}
				s.Backend = str
			case "project":
				s.Project = str
			case "location":
				s.Location = str
			case "region":
				s.Region = str
			}
		}
	}
	v.required(provider, s, present)
	return s
}

// required notes the settings provider needs and lacks; present names the
// keys given (a key given but refused is not reported twice).
func (v *validator) required(provider string, s model.Settings, present map[string]bool) {
	need := func(key, value, why string) {
		if value == "" && !present[key] {
			v.add("/json/settings/"+key, "is required %s", why)
		}
	}
	switch provider {
	case canvas.ProviderAzureOpenAI:
		need("apiVersion", s.APIVersion, "for azure-openai")
	case canvas.ProviderBedrock:
		need("region", s.Region, "for bedrock")
	case canvas.ProviderGemini:
		if s.Backend == BackendVertex {
			need("project", s.Project, "for the vertex backend")
			need("location", s.Location, "for the vertex backend")
		}
	}
}

var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")

func (v *validator) headers(path string, hs map[string]string) {
	if len(hs) > MaxHeaders {
		v.add(path, "must hold at most %d headers", MaxHeaders)
	}
	names := make([]string, 0, len(hs))
	for n := range hs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := path + "/" + n
		switch {
		case !headerName.MatchString(n):
			v.add(p, "must be a valid HTTP header name")
		case slices.Contains(keyHeaders, strings.ToLower(n)):
			v.add(p, "cannot be set here: the key goes in apiKey, which is sealed, and the client sets the others")
		case len(hs[n]) > 4096 || strings.ContainsFunc(hs[n], func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }):
			v.add(p, "must be at most 4096 characters without control characters")
		}
	}
}

// hint returns the key hint of key: "…" and its last four characters, or
// "…" alone for a key shorter than MinHintedKey.
func hint(key string) string {
	r := []rune(key)
	if len(r) < MinHintedKey {
		return "…"
	}
	return "…" + string(r[len(r)-4:])
}

// priceName matches a model name a price may be set for.
var priceName = regexp.MustCompile(`^[A-Za-z0-9._:@/-]{1,200}$`)

// MaxPricePerMillion bounds a price per million tokens, in USD.
const MaxPricePerMillion = 10000

// CheckModelName returns a VALIDATION error unless name may carry a price:
// 1 to 200 of A-Z a-z 0-9 . _ : @ / -.
func CheckModelName(name string) error {
	if !priceName.MatchString(name) {
		return canvas.Invalid("Request failed validation.", canvas.Detail{Path: "/path/name",
			Message: "must be 1 to 200 characters of A-Z, a-z, 0-9, '.', '_', ':', '@', '/' and '-'"})
	}
	return nil
}
