// Package wire holds the JSON bodies of the Prompt Canvas HTTP API: the
// requests the server decodes, the answers it encodes, the pagination
// envelope, the 202 answers, the stream chunks and the error body. The
// server's handlers and the Go client both use these types, so that the two
// sides cannot drift; where the server encodes a domain type directly
// (a canvas, a version, a completion run), the type here mirrors it field
// for field, and the server's tests prove that every field it writes is
// read back here and none is lost.
//
// The package imports the standard library only.
package wire
