package vault

import (
	"bufio"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// octetStream is the MIME type of bytes of unknown kind; an upload
// declaring it is sniffed.
const octetStream = "application/octet-stream"

// sniffLen is how many leading bytes http.DetectContentType considers.
const sniffLen = 512

// ValidateFileName reports what is wrong with a file name: empty, longer
// than MaxFileNameLength characters, not UTF-8, holding a path separator
// or a control character, or being "." or "..".
func ValidateFileName(name string) error {
	switch {
	case name == "":
		return errors.New("must not be empty")
	case !utf8.ValidString(name):
		return errors.New("must be valid UTF-8")
	case utf8.RuneCountInString(name) > MaxFileNameLength:
		return errors.New("must be at most 255 characters")
	case strings.ContainsAny(name, `/\`):
		return errors.New("must not contain path separators")
	case name == "." || name == "..":
		return errors.New("must name a file")
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return errors.New("must not contain control characters")
	}
	return nil
}

// parseContentType returns the media type of a Content-Type header, with
// its parameters kept in canonical form, or "" when the header is missing
// or application/octet-stream (the bytes are then sniffed). A malformed
// header is VALIDATION.
func parseContentType(header string) (string, error) {
	if strings.TrimSpace(header) == "" {
		return "", nil
	}
	mt, params, err := mime.ParseMediaType(header)
	if err != nil || !strings.Contains(mt, "/") || strings.HasPrefix(mt, "/") || strings.HasSuffix(mt, "/") {
		return "", canvas.Invalid("The Content-Type header is not a valid MIME type.",
			canvas.Detail{Path: "/header/Content-Type", Message: "must be a MIME type such as text/plain"})
	}
	if mt == octetStream {
		return "", nil
	}
	return mime.FormatMediaType(mt, params), nil
}

// sniff returns a reader of the whole body and its MIME type: declared
// when set, else the type http.DetectContentType finds in the first 512
// bytes.
func sniff(body io.Reader, declared string) (io.Reader, string, error) {
	if declared != "" {
		return body, declared, nil
	}
	br := bufio.NewReaderSize(body, sniffLen)
	head, err := br.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, "", err
	}
	return br, http.DetectContentType(head), nil
}
