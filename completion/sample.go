package completion

import (
	"crypto/sha256"
	"encoding/binary"
	"strconv"
)

// SampleBuckets is the number of buckets a run id hashes into: a
// percentage with two decimals takes a whole number of them.
const SampleBuckets = 10000

// Sample is a live run's draw for its canvas's review queue. The draw is
// stable: it depends on the run id only (SampleBucket), so that the same
// run is taken whatever process records it, and a canvas's share of taken
// runs follows its inferencesPercentage.
type Sample struct {
	// Bucket is SampleBucket of the run's id.
	Bucket int
}

// SampleOf returns the draw of the run with id runID.
func SampleOf(runID string) *Sample {
	return &Sample{Bucket: SampleBucket(runID)}
}

// SampleBucket returns the bucket of a run id, from 0 to SampleBuckets-1:
// the first 8 bytes of the SHA-256 of the id, big-endian, modulo
// SampleBuckets.
func SampleBucket(runID string) int {
	sum := sha256.Sum256([]byte(runID))
	return int(binary.BigEndian.Uint64(sum[:8]) % SampleBuckets)
}

// Takes reports whether a canvas whose inferencesPercentage is percentage
// (a decimal string from "0" to "100", as canvas validation keeps it)
// samples the run: whether its bucket is under percentage hundredths of
// SampleBuckets. "0" or a value that does not parse takes none, "100"
// takes all.
func (s *Sample) Takes(percentage string) bool {
	f, err := strconv.ParseFloat(percentage, 64)
	if err != nil {
		return false
	}
	return float64(s.Bucket) < f*SampleBuckets/100
}

// sample returns the draw of run for the review queue when params mark a
// live run, nil otherwise.
func sample(params RunParams, run *Run) *Sample {
	if !params.Live {
		return nil
	}
	return SampleOf(run.ID)
}
