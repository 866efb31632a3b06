package wire_test

import (
	"encoding/json"
	"fmt"

	"github.com/promptcanvas/promptcanvas/client/wire"
)

// ExampleConfiguration reads a version's configuration: the keys the server
// interprets fill the fields, the others are kept in Extra and written back.
func ExampleConfiguration() {
	var c wire.Configuration
	if err := json.Unmarshal([]byte(`{"model": "echo", "temperature": 0.2, "seed": 7}`), &c); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Model, *c.Temperature, string(c.Extra["seed"]))
	out, _ := json.Marshal(c)
	fmt.Println(string(out))
	// Output:
	// echo 0.2 7
	// {"model":"echo","seed":7,"temperature":0.2}
}

// ExampleErrorBody reads an error answer.
func ExampleErrorBody() {
	var e wire.ErrorBody
	_ = json.Unmarshal([]byte(`{"code": "VALIDATION", "message": "Request body failed validation.",
		"details": [{"path": "/json/canvas_id", "message": "is required"}], "requestId": "r1"}`), &e)
	fmt.Println(e.Code == wire.CodeInvalid, e.Details[0].Path)
	// Output: true /json/canvas_id
}
