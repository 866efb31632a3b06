package server

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestInvalidText(t *testing.T) {
	for _, tt := range []struct {
		name, body, at string
	}{
		{"Valid", `{"a":"é","b":["\ud83d\ude00",1,null,{"c":"x"}]}`, ""},
		{"EscapedBackslash", `{"a":"\\ud800"}`, ""},
		{"NotAString", `{"a":5,"b":true}`, ""},
		{"TopLevelString", `"` + "\xff" + `"`, ""},
		{"Value", `{"a":"` + "\xff" + `"}`, "/a"},
		{"Key", `{"ok":1,"k` + "\xff" + `":1}`, "/k\ufffd"},
		{"SecondElement", `{"a":[{"b":"x"},{"b":"\udfff"}]}`, "/a/1/b"},
		{"AfterNestedObject", `{"a":{"b":{}},"c":"\ud800"}`, "/c"},
		{"HighThenNotLow", `{"a":"\ud800\u0041"}`, "/a"},
		{"HighAtEnd", `{"a":"x\uD800"}`, "/a"},
		{"PointerEscapes", `{"a/b~c":"\ud800"}`, "/a~1b~0c"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			at, bad := invalidText([]byte(tt.body))
			assert.Equal(t, tt.at != "" || tt.name == "TopLevelString", bad)
			assert.Equal(t, tt.at, at)
		})
	}
}

func TestIdempotencyKey(t *testing.T) {
	for _, tt := range []struct {
		name   string
		values []string
		key    string
		given  bool
	}{
		{"Absent", nil, "", false},
		{"Blank", []string{""}, "", true},
		{"Key", []string{"k"}, "k", true},
		{"Repeated", []string{"a", "b"}, "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &http.Request{Header: http.Header{}}
			for _, v := range tt.values {
				r.Header.Add("Idempotency-Key", v)
			}
			key, given := idempotencyKey(r)
			assert.Equal(t, tt.key, key)
			assert.Equal(t, tt.given, given)
		})
	}
}
