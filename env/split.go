package env

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"unicode/utf8"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// Split bounds: a split publication serves MinSplit to MaxSplit versions,
// each with an integer weight of 1..99 percent, the weights summing to 100.
const (
	MinSplit       = 2
	MaxSplit       = 5
	MaxAssignment  = 256
	splitWeightSum = 100
)

// SplitEntry is one version of a split publication and its share of the
// traffic, in percent.
type SplitEntry struct {
	VersionID string `json:"versionId"`
	Weight    int    `json:"weight"`
}

// CheckSplit checks the shape of a split: MinSplit to MaxSplit entries of
// distinct versions, each weight 1..99, the weights summing to 100. It is
// VALIDATION listing every problem at its JSON pointer under /json/split;
// whether the versions are live versions of the canvas is the publish's
// transaction's to check.
func CheckSplit(split []SplitEntry) error {
	var details []canvas.Detail
	if n := len(split); n < MinSplit || n > MaxSplit {
		details = append(details, canvas.Detail{Path: "/json/split",
			Message: fmt.Sprintf("must have %d to %d entries", MinSplit, MaxSplit)})
	}
	sum := 0
	seen := make(map[string]int, len(split))
	for i, e := range split {
		if e.Weight < 1 || e.Weight > splitWeightSum-1 {
			details = append(details, canvas.Detail{Path: fmt.Sprintf("/json/split/%d/weight", i),
				Message: "must be an integer from 1 to 99"})
		}
		sum += e.Weight
		if j, ok := seen[e.VersionID]; ok {
			details = append(details, canvas.Detail{Path: fmt.Sprintf("/json/split/%d/versionId", i),
				Message: fmt.Sprintf("repeats the version of entry %d", j)})
		} else {
			seen[e.VersionID] = i
		}
	}
	if len(split) > 0 && sum != splitWeightSum {
		details = append(details, canvas.Detail{Path: "/json/split",
			Message: fmt.Sprintf("weights must sum to 100, not %d", sum)})
	}
	if len(details) > 0 {
		return canvas.Invalid("The split is not valid.", details...)
	}
	return nil
}

// CheckAssignmentKey checks an assignment key: at most MaxAssignment bytes
// of UTF-8. path is the pointer a problem is reported at.
func CheckAssignmentKey(key, path string) error {
	if len(key) > MaxAssignment || !utf8.ValidString(key) {
		return canvas.Invalid("The assignment key is not valid.", canvas.Detail{Path: path,
			Message: fmt.Sprintf("must be UTF-8 text of at most %d bytes", MaxAssignment)})
	}
	return nil
}

// Assign returns the entry of split (a valid one) that serves the
// assignment key of a request to publication publicationID. A key is
// assigned by a stable hash: the first 8 bytes of SHA-256(publicationID,
// 0x00, key) as a big-endian integer, mod 100, falls in the cumulative
// weights of one entry; so a key keeps its entry for as long as the
// publication is active, and a new publication assigns keys anew. An empty
// key draws at random.
func Assign(split []SplitEntry, publicationID, key string) int {
	var bucket int
	if key == "" {
		bucket = rand.IntN(splitWeightSum)
	} else {
		h := sha256.New()
		h.Write([]byte(publicationID))
		h.Write([]byte{0})
		h.Write([]byte(key))
		bucket = int(binary.BigEndian.Uint64(h.Sum(nil)[:8]) % splitWeightSum)
	}
	cum := 0
	for i, e := range split {
		cum += e.Weight
		if bucket < cum {
			return i
		}
	}
	return len(split) - 1
}
