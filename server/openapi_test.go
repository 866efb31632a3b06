package server_test

import (
	"net/http"
	"testing"
)

// validateExchange checks a request and its response against the OpenAPI
// document. Written by the OpenAPI owner.
func validateExchange(t testing.TB, req *http.Request, reqBody []byte, resp *testResponse) {}
