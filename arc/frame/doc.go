// Package frame owns the ARC-AGI-3 frame: a grid of colour indices, its hex
// ASCII and PNG forms, fast comparison of two frames and the two mismatch
// views the verifier writes (spec arc.md "Session recording", "Verification",
// "Palette"; seed 003 frame_plot_lib.py).
//
// It must not know about sessions, levels, attempts, actions or world models:
// package evident/arc/session reads and writes the session tree and calls this
// package for every frame file; the verifier and plan executor decide when to
// write mismatch artifacts and print their paths.
//
// # Grid
//
// A [Grid] is Width columns × Height rows of uint8 cells, row-major, origin
// top-left; x is the column and y the row, as in ACTION6 and package image.
// Game frames are 64×64 ([GameSide]); any size from 1×1 up to
// [MaxSide]×[MaxSide] is allowed because a level's initial full frame may be
// larger than the screen. Values 0–15 are the game colours. Any other value
// (a world-model renderer may produce one) is out of palette: it renders black
// (spec "Palette"), never equals a colour of a real frame, and is written to
// ASCII as '?'. Constructors from wider integer types store every value outside
// 0–15 as [Invalid] so that, say, 256 can never wrap to 0 and match.
//
// # ASCII (spec "Session recording")
//
// Writers emit one uppercase hex digit per cell and '\n' after every row,
// nothing else. Readers accept lowercase, skip blank lines, and — a choice the
// spec leaves open — also strip spaces, tabs and '\r' around a row (files
// edited on Windows or by hand), accept a missing final newline, and require
// every non-blank row to have the width of the first one. Errors are
// *[ParseError] values, the module's located error (evident/internal/
// located), carrying file, 1-based line and 1-based column.
//
// # PNG (spec "Palette", "Session recording")
//
// Every cell becomes a [Scale]×[Scale] (8×8) block of its palette colour.
// [Grid.Image] and the mismatch views are paletted images in memory (the 16
// game colours, then brown and magenta); every PNG file is written as 8-bit
// RGB, colour type 2, as baseline1's client writes its frames (PIL mode
// "RGB", so np.array(Image.open(png)) has shape (512, 512, 3) for a game
// frame; spec arc.md "Compatibility facts"). Files are encoded with zlib's
// fastest level: the recorder writes one per step and the verifier several
// per mismatch, and the pixels are identical whatever the compression level
// (baseline1's files are not byte-identical to ours, only pixel-identical).
//
// # Comparison
//
// [Equal] is one vectorised byte compare. [CountMismatches] and
// [AppendMismatches] skip equal 128-cell chunks the same way and scan only the
// differing chunks, eight cells per machine word; none of them allocates
// (AppendMismatches only to grow dst). Frames of different shapes are compared over the union of the
// two rectangles: a cell that lies in exactly one of them is a mismatch, a cell
// in neither (possible when one frame is wider and the other taller) is not.
//
// # Mismatch views (spec "Verification"; seed MISMATCH_RADIUS, BROWN_RGB, MAGENTA_RGB)
//
// Both views are drawn on the real frame's rectangle at [Scale]; a mismatching
// cell is a cell of the real frame that the predicted frame lacks or colours
// differently. Mismatches the predicted frame has outside the real rectangle
// cannot be drawn and are not.
//
//   - v1, [MismatchRegion] (mismatch_region.png): a cell keeps the real frame's
//     colour iff some mismatching cell (mx, my) satisfies
//     (x−mx)² + (y−my)² ≤ [MismatchRadius]² = 49, distances measured between
//     cell indices, i.e. cell centres, so the disc is decided per cell and each
//     8×8 block is either wholly real or wholly brown (139,69,19). The
//     mismatching cells themselves show their real colour. No mismatch: all
//     brown.
//   - v2, [MismatchAsMagneta] (mismatch_as_magneta.png): the real frame with
//     every mismatching cell magenta (255,0,255). No mismatch: the real frame.
//
// "magneta" is the seed's spelling, kept on purpose in file and function names.
//
// [WriteMismatchArtifacts] writes the four files of one mismatch into
// mismatch_frames/<N>/, N being the highest existing all-digit folder name
// plus one, starting at 1 when there is none (the spec does not say where N
// starts; levels, attempts and steps all count from 1). The folder is claimed
// with an exclusive mkdir, so two verifiers never share one.
package frame
