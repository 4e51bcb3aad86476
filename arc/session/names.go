package session

import (
	"fmt"
	"strings"
)

// File and folder names of the session layout (spec arc.md "Session
// recording", "Vocabulary and contracts").
const (
	// Dir is the session root relative to the agent workspace.
	Dir = "client/session"
	// InitialMetadataFile, InitialFrameFile and InitialPNGFile are the
	// response that opened an attempt.
	InitialMetadataFile = "initial_metadata.json"
	InitialFrameFile    = "initial_frame.txt"
	InitialPNGFile      = "initial_frame.png"
	// InitialFullFramesDir holds level_N.txt full initial frames of partly
	// visible levels, relative to the workspace.
	InitialFullFramesDir = "initial_full_frames"
)

// AttemptDirName is the padded folder name of an attempt:
// "level_02_attempt_01" for (2, 1).
func AttemptDirName(level, attempt int) string {
	return fmt.Sprintf("level_%02d_attempt_%02d", level, attempt)
}

// StepMetadataFile is "step_0007_metadata.json" for step 7.
func StepMetadataFile(step int) string { return fmt.Sprintf("step_%04d_metadata.json", step) }

// StepFinalFile is "step_0007_final.txt" for step 7.
func StepFinalFile(step int) string { return fmt.Sprintf("step_%04d_final.txt", step) }

// StepFinalPNGFile is "step_0007_final.png" for step 7.
func StepFinalPNGFile(step int) string { return fmt.Sprintf("step_%04d_final.png", step) }

// StepIntermediateFile is "step_0007_intermediate_02.txt" for step 7 and
// intermediate i = 2. The recorder numbers intermediates by their 0-based
// index in the response (the first frame is _00), as baseline1's client
// does; evident's older recordings start at _01, and readers accept both.
func StepIntermediateFile(step, i int) string {
	return fmt.Sprintf("step_%04d_intermediate_%02d.txt", step, i)
}

// StepIntermediatePNGFile is "step_0007_intermediate_02.png" for step 7,
// frame 2.
func StepIntermediatePNGFile(step, i int) string {
	return fmt.Sprintf("step_%04d_intermediate_%02d.png", step, i)
}

// InitialFullFrameFile is "level_3.txt" for level 3 (no zero padding).
func InitialFullFrameFile(level int) string { return fmt.Sprintf("level_%d.txt", level) }

// maxDigits bounds the numbers in names so they fit an int everywhere.
const maxDigits = 9

// cutNumber splits a leading run of 1..maxDigits decimal digits off s.
func cutNumber(s string) (n int, rest string, ok bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		if i == maxDigits {
			return 0, s, false
		}
		n = n*10 + int(s[i]-'0')
		i++
	}
	return n, s[i:], i > 0
}

// ParseAttemptDirName parses "level_{L}_attempt_{A}" with any zero padding.
// ok is false for any other name, or when L or A is 0.
func ParseAttemptDirName(name string) (level, attempt int, ok bool) {
	rest, found := strings.CutPrefix(name, "level_")
	if !found {
		return 0, 0, false
	}
	level, rest, ok = cutNumber(rest)
	if !ok {
		return 0, 0, false
	}
	if rest, found = strings.CutPrefix(rest, "_attempt_"); !found {
		return 0, 0, false
	}
	attempt, rest, ok = cutNumber(rest)
	if !ok || rest != "" || level == 0 || attempt == 0 {
		return 0, 0, false
	}
	return level, attempt, true
}

// stepFileKind is what a step file holds.
type stepFileKind int

const (
	kindMetadata stepFileKind = iota
	kindFinal
	kindFinalPNG
	kindIntermediate
	kindIntermediatePNG
)

// StepDigits is the number of digits of the step number in step file names:
// baseline1's readers match ^step_(\d{4})_metadata\.json$ and build every
// other step file name with {:04d} (spec arc.md "Compatibility facts").
const StepDigits = 4

// parseStepFileName parses the step file names of the layout; inter is the
// intermediate number for the intermediate kinds (any number of digits).
// padded is false for a name of the layout whose step number does not have
// exactly StepDigits digits (step_7_final.txt), which readers refuse.
func parseStepFileName(name string) (step int, kind stepFileKind, inter int, padded, ok bool) {
	rest, found := strings.CutPrefix(name, "step_")
	if !found {
		return 0, 0, 0, false, false
	}
	before := len(rest)
	step, rest, ok = cutNumber(rest)
	if !ok {
		return 0, 0, 0, false, false
	}
	padded = before-len(rest) == StepDigits
	switch rest {
	case "_metadata.json":
		return step, kindMetadata, 0, padded, true
	case "_final.txt":
		return step, kindFinal, 0, padded, true
	case "_final.png":
		return step, kindFinalPNG, 0, padded, true
	}
	if rest, found = strings.CutPrefix(rest, "_intermediate_"); !found {
		return 0, 0, 0, false, false
	}
	inter, rest, ok = cutNumber(rest)
	if !ok {
		return 0, 0, 0, false, false
	}
	switch rest {
	case ".txt":
		return step, kindIntermediate, inter, padded, true
	case ".png":
		return step, kindIntermediatePNG, inter, padded, true
	}
	return 0, 0, 0, false, false
}
