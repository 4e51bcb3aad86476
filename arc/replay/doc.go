// Package replay owns what the verifier (evident/arc/verify) and the plan
// executor (evident/arc/planexec) share (spec arc.md "Verification", "Plan
// executor"): replaying a recorded attempt through the world model, the
// rendered frame (state_renderer, then apply_render_overrides with its
// warning), the mismatch block and its artifacts folder
// (<workspace>/mismatch_frames/<N>/), model errors turned into report
// lines, and the one [Failure] type both commands return for what they
// reported.
//
// It must not read the session from disk (evident/arc/session does), send
// actions or speak HTTP (evident/arc/client), run model code itself
// (evident/arc/worldmodel, behind worldmodel.Model) or draw frames
// (evident/arc/frame writes the artifacts). It decides no report line of
// its own beyond the ones listed below; the commands compose the rest.
//
// # Lines (byte for byte, seed 003 verify_world_model.py)
//
// The mismatch block, after the caller's head lines ([Run.FrameFailure]):
//
//	real ascii: <session>/level_RR_attempt_AA/step_KKKK_final.txt
//	real png: <session>/level_RR_attempt_AA/step_KKKK_final.png
//	simulated ascii: <ws>/mismatch_frames/N/simulated_frame.txt (predicted frame as text)
//	simulated png: <ws>/mismatch_frames/N/simulated_frame.png (predicted frame rendered)
//	mismatch region png: <ws>/mismatch_frames/N/mismatch_region.png (localized mismatch neighborhoods)
//	mismatch as magneta png: <ws>/mismatch_frames/N/mismatch_as_magneta.png (full frame with magenta mismatch pixels)
//
// ("magneta" is the seed's spelling, kept on purpose.) The override warning,
// once per level per [Run], after Run.Head:
//
//	warning: level L uses apply_render_overrides; treat this as temporary and as a clue to a missing puzzle mechanic
//
// A model error: "<where>: <error detail>" (worldmodel.CallError.Detail, the
// Starlark or Python traceback included); past the run's deadline the
// Run.TooSlow line alone.
//
// # Decisions where the spec and seed are silent
//
//   - A real file that is absent is printed as its expected path followed
//     by " (missing)" ([Real]).
//   - The override warning uses the state's "level", as the seed does.
//   - A cancellation by the caller is never a Failure: it is returned as it
//     is, and so is a deadline that is not the Run's own.
package replay
