package model

// Round is one round of an adaptive run as it starts: the round that
// gathers the answers of look Index of a sequential design (see Look).
type Round struct {
	Index, Of int // round Index of Of (the design's looks)
	Calls     int // the calls this round makes
	// Made is the answer calls the run made before this round; AtMost the
	// most it makes in all (Made, this round's calls and every later
	// round's, were no further line to settle); NotNeeded the calls not
	// stored that the run will never make: they serve only settled lines.
	Made, AtMost, NotNeeded int
}
