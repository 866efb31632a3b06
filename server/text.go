package server

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// invalidText returns the JSON pointer of the first string of body, a key
// or a value, that is not valid UTF-8 or that escapes a lone UTF-16
// surrogate (such as "\ud800"), and true; "" and false when every string is
// valid text. encoding/json would silently replace either with U+FFFD, so
// the server refuses them instead. body must be valid JSON.
func invalidText(body []byte) (string, bool) {
	if utf8.Valid(body) && !bytes.Contains(body, []byte(`\ud`)) && !bytes.Contains(body, []byte(`\uD`)) {
		return "", false // the common case: no string to look at
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	// A frame is an open container: an object with its current key and
	// whether it waits for the next key, or an array with its current
	// index.
	type frame struct {
		object    bool
		expectKey bool
		key       string
		index     int
	}
	var stack []*frame
	pointer := func() string {
		var b strings.Builder
		for _, f := range stack {
			b.WriteByte('/')
			if f.object {
				b.WriteString(escapePointer(f.key))
			} else {
				b.WriteString(strconv.Itoa(f.index))
			}
		}
		return b.String()
	}
	// valueDone moves the innermost container past one value.
	valueDone := func() {
		if n := len(stack); n > 0 {
			if f := stack[n-1]; f.object {
				f.expectKey = true
			} else {
				f.index++
			}
		}
	}
	prev := int64(0)
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		end := dec.InputOffset()
		literal := body[prev:end]
		prev = end
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, &frame{object: true, expectKey: true})
			case '[':
				stack = append(stack, &frame{})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].expectKey {
				f := stack[n-1]
				f.key, f.expectKey = v, false
				if !validStringLiteral(literal) {
					return pointer(), true
				}
				continue
			}
			if !validStringLiteral(literal) {
				return pointer(), true
			}
			valueDone()
		default:
			valueDone()
		}
		if len(stack) == 0 {
			return "", false
		}
	}
}

// validStringLiteral reports whether the JSON string literal at the end of
// raw (preceded by whitespace, commas or colons) is valid UTF-8 and escapes
// no lone surrogate.
func validStringLiteral(raw []byte) bool {
	i := bytes.IndexByte(raw, '"')
	if i < 0 {
		return true
	}
	s := raw[i:]
	if !utf8.Valid(s) {
		return false
	}
	for j := 0; j < len(s); j++ {
		if s[j] != '\\' {
			continue
		}
		j++
		if j >= len(s) || s[j] != 'u' {
			continue
		}
		r, ok := hex4(s, j+1)
		if !ok {
			continue
		}
		j += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return false // a low surrogate with no high one before it
		case r >= 0xD800 && r <= 0xDBFF:
			if j+2 >= len(s) || s[j+1] != '\\' || s[j+2] != 'u' {
				return false
			}
			low, ok := hex4(s, j+3)
			if !ok || low < 0xDC00 || low > 0xDFFF {
				return false
			}
			j += 6
		}
	}
	return true
}

// hex4 reads the four hex digits of a \u escape at s[i:].
func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(s[i:i+4]), 16, 16)
	return rune(n), err == nil
}

// escapePointer escapes a JSON pointer token (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
