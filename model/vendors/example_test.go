package vendors_test

import (
	"fmt"
	"maps"
	"slices"

	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/model/vendors"
)

// Example registers every vendor for a Caller that runs workspace
// credentials.
func Example() {
	kinds := vendors.Kinds(nil)
	_ = model.NewCaller(model.Options{Kinds: kinds})
	fmt.Println(slices.Sorted(maps.Keys(kinds)))
	// Output: [anthropic azure-openai bedrock gemini openai openai-compatible]
}
